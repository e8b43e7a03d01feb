#!/usr/bin/env bash
# The CUDA pass on real hardware, in one short run (see docs/raw-recording.md, "On a GPU").
# Run from the repository root on a machine with an NVIDIA GPU and torch with CUDA:
#   OUT=/some/folder bash benchmarks/device/check.sh
# Needs only python3 with torch (the CLI's profile path imports no pygls). For each script it
# writes the text report, the JSON result, the raw recordings (--save-raw) and bare timings to
# $OUT. Nothing is edited afterwards: commit what it proves, as it came, $OUT/raw whole (the
# memory cases' recordings too: tests replay them). Then benchmarks/device/side_by_side.sh.
# `run` profiles each pass in a run of its own (--separate-runs, recorded whole); `once`, the
# default since the one run's GPU path was tested with a CPU recording standing in for the
# device's (tests/test_gpu_one_run_handoffs.py): the script once, the passes in its windows.
set -uo pipefail
OUT=${OUT:?set OUT to a folder for the results}
PY=${PYTHON:-python3}
export PYTHONPATH="$PWD/server${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT/raw"
{
    "$PY" -c 'import sys, torch; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda); print("device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)'
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
} > "$OUT/machine.txt" 2>&1

render() {  # result.json, report.txt: the text report of a JSON result
    "$PY" - "$1" > "$2" 2>&1 <<'PYEOF'
import json, sys
from bottleneck_lsp.formats import report
from bottleneck_lsp.schema.model import Document
print(report.render(Document.from_json(json.load(open(sys.argv[1])))))
PYEOF
}

run() {  # name, script, args...
    local name=$1; shift
    local begin end
    begin=$(date +%s.%N)
    "$PY" "$@" > "$OUT/$name.bare.out" 2>&1
    end=$(date +%s.%N)
    echo "$name bare_s $("$PY" -c "print(round($end - $begin, 3))")" >> "$OUT/timings.txt"
    begin=$(date +%s.%N)
    timeout 300 "$PY" -m bottleneck_lsp --separate-runs --format json -o "$OUT/$name.result.json" \
        --save-raw "$OUT/raw" "$@" > /dev/null 2> "$OUT/$name.profile.err"
    echo "$name profile_rc $? profile_s $("$PY" -c "print(round($(date +%s.%N) - $begin, 3))")" >> "$OUT/timings.txt"
    "$PY" -m bottleneck_lsp.cli replay "$OUT/raw/$(basename "${1%.py}").cuda.raw.json.gz" \
        > "$OUT/$name.cuda-replay.txt" 2>&1 || true
    render "$OUT/$name.result.json" "$OUT/$name.report.txt"
}

run gpu_bound tests/fixtures/cuda_gpu_bound.py
run cpu_bound tests/fixtures/cuda_cpu_bound.py
# Memory on the GPU (docs/memory.md): activations held until backward, and an out-of-memory
# error (the script's exit is non-zero: the report must name the planted line first).
run cuda_activation tests/memory/activation.py cuda
run cuda_oom tests/memory/cuda_out_of_memory.py
# The script starts torch's profiler itself: each pass that records with torch's profiler
# (the sample pass's device recording, the cuda pass) ends its recording there and says so.
run own_profiler tests/scripts/own_profiler.py torch.profiler cuda
run train_cuda examples/train.py --device ${TRAIN_DEVICE:-cuda} --steps 10 --width 2048
# torch.compile on the GPU (issue 47): Triton kernels on the lines they were made from; the
# cuda pass's raw recording keeps the graphs' kernels and lines (replayable in CI)
run compiled_cuda tests/scripts/compiled_forward.py 4 cuda
# The one run on a GPU (issue 46, the default; first run on hardware here): the windows record
# the device too (the cuda pass's columns) while the sample pass's device recording pauses.
# Its lines and verdict should agree with the separate runs' above (`run`).
# Each window's raw recording is kept ($OUT/once-raw/STEM.cuda.windowN.raw.json.gz: commit
# them; replay reads them together, and tests/test_replay.py should replay them in CI).
once() {  # name, script, args...
    local name=$1; shift
    local begin stem
    mkdir -p "$OUT/once-raw"
    begin=$(date +%s.%N)
    timeout 300 "$PY" -m bottleneck_lsp --format json \
        -o "$OUT/$name.once.result.json" --save-raw "$OUT/once-raw" "$@" > /dev/null 2> "$OUT/$name.once.err"
    echo "$name once_rc $? once_s $("$PY" -c "print(round($(date +%s.%N) - $begin, 3))")" >> "$OUT/timings.txt"
    stem=$(basename "${1%.py}")
    # shellcheck disable=SC2046 # (one argument per window, in their order)
    "$PY" -m bottleneck_lsp.cli replay $(ls "$OUT/once-raw/$stem".cuda.window*.raw.json.gz | sort -V) \
        > "$OUT/$name.once-replay.txt" 2>&1 || true
    render "$OUT/$name.once.result.json" "$OUT/$name.once.report.txt"
}
once gpu_bound tests/fixtures/cuda_gpu_bound.py
once cpu_bound tests/fixtures/cuda_cpu_bound.py
once train_cuda examples/train.py --device ${TRAIN_DEVICE:-cuda} --steps 10 --width 2048
once compiled_cuda tests/scripts/compiled_forward.py 4 cuda
# The same without the fork server (a fresh interpreter, the one run), for comparison.
begin=$(date +%s.%N)
timeout 300 "$PY" -m bottleneck_lsp --no-fork --format json -o "$OUT/train_cuda.nofork.result.json" \
    examples/train.py --device ${TRAIN_DEVICE:-cuda} --steps 10 --width 2048 > /dev/null 2> "$OUT/train_cuda.nofork.err"
echo "train_cuda_nofork profile_rc $? profile_s $("$PY" -c "print(round($(date +%s.%N) - $begin, 3))")" >> "$OUT/timings.txt"
gzip -9 -f "$OUT"/*.result.json
ls -la "$OUT" "$OUT/raw" >> "$OUT/timings.txt"
cat "$OUT/timings.txt"
