"""Generators of cdc histories."""
