# Writes bytes that are not UTF-8, then many three-byte characters (a progress bar's blocks),
# so that the pipe's chunks end inside some of them.
import sys

sys.stdout.buffer.write(b"\xff\xfe\x00binary\n" + ("\u2588" * 200_000).encode() + b"\nEND\n")
sys.stdout.flush()
