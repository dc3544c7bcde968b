"""exitcode.py CODE CMD ARGS...: succeeds iff CMD exits with CODE (lit's `not` accepts any failure)."""
import subprocess
import sys

sys.exit(subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) != int(sys.argv[1]))
