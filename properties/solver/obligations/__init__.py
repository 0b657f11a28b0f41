"""The obligations, one module each; `frontier_harness.properties.solver.registry` lists them by name.

1. `time_dependence`: time dependence is sound, per object kind, compositionally, for every skew.
2. `visible`: a time visible before the restart is before the until.
3. `hold`: the hold at the expiration is never reached and hides exactly what is dropped.
4. `restart`: a restarted incarnation re-derives what was dropped and holds too.
5. `useful`: over epoch inputs not ahead, without a refresh, every diff past the replica's life is dropped.
6. `refresh`: `next_refresh` is the first refresh at or after a time as `REFRESH EVERY`/`AT` document it.

Obligations 1, 4 and 5 are proved per kind with the inputs' bounds as hypotheses, and
the meet of any number of inputs by induction (a base case and a step), so they hold for
every catalog DAG. Obligations 2-3 take obligation 1's conclusion for the dataflow as
their hypothesis. The lattice laws are `frontier_harness.properties.solver.lattice`.
"""
