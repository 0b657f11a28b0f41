"""A change to a running stateful job, judged before it ships: will it restart on the production checkpoint,
and will its results stay right? (`compare`: the static half, over what Spark keys a checkpoint on;
`switch`: the rows an upgrade may change, for the dynamic half's trials.)"""
