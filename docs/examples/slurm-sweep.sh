#!/bin/sh
# One sresim sweep as a Slurm array job: array task I runs shard I/N of the grid into
# OUT/shards/I-of-N, and a job that starts when every task has succeeded merges the
# shards into OUT (points.csv, sweep.json: the same bytes as an unsharded run).
#
# Submit from the repository root (the grid's workloads and base config resolve there):
#
#   GRID=configs/sweeps/ou-size.toml OUT=out/sweeps/ou-size N=8 sh docs/examples/slurm-sweep.sh
#
# Re-running the same command after a failure or a preemption only computes the missing
# points: every task runs with --resume, so a requeued task continues its shard.
# Environment: GRID, OUT, N (shards, default 4), SRESIM (default target/release/sresim),
# SBATCH_ARGS (extra sbatch options, e.g. "--partition=short --account=me").
#
#SBATCH --job-name=sresim-sweep
#SBATCH --cpus-per-task=4
#SBATCH --mem=4G
#SBATCH --time=02:00:00
#SBATCH --requeue
#SBATCH --output=slurm-sresim-%A_%a.out
set -eu
: "${GRID:?set GRID to a grid file}"
: "${OUT:?set OUT to an output directory}"
N=${N:-4}
SRESIM=${SRESIM:-target/release/sresim}

case "${1:-submit}" in
submit)
    # Outside Slurm: submit the array, then the merge that waits for all of it.
    [ -x "$SRESIM" ] || cargo build --release
    array=$(sbatch --parsable ${SBATCH_ARGS:-} --array="0-$((N - 1))" \
        --export=ALL,GRID="$GRID",OUT="$OUT",N="$N",SRESIM="$SRESIM" "$0" task)
    sbatch --parsable ${SBATCH_ARGS:-} --dependency="afterok:$array" --job-name=sresim-merge \
        --export=ALL,GRID="$GRID",OUT="$OUT",N="$N",SRESIM="$SRESIM" "$0" merge
    ;;
task)
    # One array task: shard I of N.
    I=${SLURM_ARRAY_TASK_ID:?not inside a Slurm array task}
    exec "$SRESIM" sweep --grid "$GRID" --out "$OUT/shards/$I-of-$N" --shard "$I/$N" \
        --resume --threads "${SLURM_CPUS_PER_TASK:-1}" --quiet
    ;;
merge)
    # After every task: join the shards (the merge checks that they share the grid and
    # that no point is missing).
    set --
    I=0
    while [ "$I" -lt "$N" ]; do
        set -- "$@" "$OUT/shards/$I-of-$N"
        I=$((I + 1))
    done
    exec "$SRESIM" merge "$@" --out "$OUT"
    ;;
*)
    echo "usage: $0 [submit|task|merge]" >&2
    exit 2
    ;;
esac
