"""Oracles: the seeds' rules restated small and obvious, from a history's plain data.

An oracle never imports the model function it judges (see DESIGN.md, "Oracles").
"""
