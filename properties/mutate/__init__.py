"""`frontier-harness mutate`: how many planted mistakes the suites would catch.

A mutant is the target's source with one small change a time-handling mistake
makes (`frontier_harness.properties.mutate.operators`). Each runs in this process against the
suites whose histories reach its line: the mutated module is executed fresh and
the modules that import it are re-executed so their `from x import f` bindings
see the mutant; the Spark session (and its JVM) is never restarted for it.

- `operators`: the mutation operators, one class each.
- `sources`: the target's modules, their import graph, the modules that depend on one.
- `mutants`: enumerating mutants over a module's AST and applying one.
- `loader`: one mutant in memory at a time, the originals restored afterwards.
- `reach`: which lines each (suite, property, domain) reaches, traced once unmutated.
- `since`: the lines changed since a git ref.
- `probe`: one (suite, property, domain) check, the single call into the runner.
- `watchdog`: a per-check time limit that also cancels Spark jobs.
- `baseline`: a probe run once unmutated (its time, the lines it reaches, whether it holds).
- `engine`: baseline, then every mutant's verdict, cheapest check first.
- `by_tests`: `--tests`, each mutant judged by a pytest command in a process of its own;
  `pytest_plugin`: that process's side (the mutant served to every import, what it observed).
- `results`: verdicts, the score; `output`: tables, JSON and JUnit; `command`: the CLI verb.
"""
