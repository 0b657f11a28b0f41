"""Tests of the cdc capability, against a PostgreSQL cluster the session starts (`conftest.py`)."""
