"""The seeds' rules restated small and obvious, from a history's plain data (DESIGN.md, "Oracles")."""
