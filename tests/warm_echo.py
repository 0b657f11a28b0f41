"""A module the warm-runner tests fork in place of Spark's source runner: it shows what it was given.

It writes its pid, directory, `ECHO` variable, first line of stdin, `sys.path` (`os.pathsep` between) and its
arguments (spaces between) to stdout (`|` between), then sleeps `SLEEP` seconds and exits with `CODE`."""

import os
import sys
import time

if __name__ == "__main__":
    shown = [
        str(os.getpid()),
        os.getcwd(),
        os.environ.get("ECHO", ""),
        sys.stdin.readline().strip(),
        os.pathsep.join(sys.path),
        " ".join(sys.argv[1:]),
    ]
    print("|".join(shown), flush=True)
    time.sleep(float(os.environ.get("SLEEP", "0")))
    sys.exit(int(os.environ.get("CODE", "0")))
