"""The stateful suite: a user's event-time job under crash trials, judged by watermarks as frontiers."""
