"""The upgrade suite: a stateful job's query switched to a changed job at a drawn batch, judged by the model."""
