#!/bin/sh
# One sresim accuracy run over many samples as a Slurm array job: array task I runs
# samples [I*SAMPLES/N, (I+1)*SAMPLES/N) into OUT/shards/I-of-N, and a job that starts when
# every task has succeeded merges the shards into OUT (accuracy.csv, summary.json: the
# same bytes as the unsharded run).
#
# Submit from the repository root (a bundle named by its directory resolves there):
#
#   SAMPLES=2000 OUT=out/acc N=8 ACCURACY_ARGS="--workload fmnist-cnn --modes dense,sre \
#       --set device.preset=dlrsim-rram --draws 5" sh docs/examples/slurm-accuracy.sh
#
# Every task gets the same ACCURACY_ARGS and SAMPLES (the shards of one run must agree:
# the merge refuses shards of different configs, modes, draws, seeds or layers). A task
# that fails or is preempted is rerun alone (`sbatch --array=I ...` with the same
# environment, the task step), then the merge.
# Environment: SAMPLES, OUT, N (shards, default 4), ACCURACY_ARGS, SRESIM (default
# target/release/sresim), SBATCH_ARGS (extra sbatch options).
#
#SBATCH --job-name=sresim-accuracy
#SBATCH --cpus-per-task=4
#SBATCH --mem=4G
#SBATCH --time=02:00:00
#SBATCH --requeue
#SBATCH --output=slurm-sresim-%A_%a.out
set -eu
: "${SAMPLES:?set SAMPLES to the run's number of graph-input samples}"
: "${OUT:?set OUT to an output directory}"
N=${N:-4}
SRESIM=${SRESIM:-target/release/sresim}
ACCURACY_ARGS=${ACCURACY_ARGS:-}

case "${1:-submit}" in
submit)
    # Outside Slurm: submit the array, then the merge that waits for all of it.
    [ -x "$SRESIM" ] || cargo build --release
    env="ALL,SAMPLES=$SAMPLES,OUT=$OUT,N=$N,SRESIM=$SRESIM"
    array=$(ACCURACY_ARGS="$ACCURACY_ARGS" sbatch --parsable ${SBATCH_ARGS:-} \
        --array="0-$((N - 1))" --export="$env" "$0" task)
    ACCURACY_ARGS="$ACCURACY_ARGS" sbatch --parsable ${SBATCH_ARGS:-} \
        --dependency="afterok:$array" --job-name=sresim-merge --export="$env" "$0" merge
    ;;
task)
    # One array task: its slice of the samples (sizes differ by at most one).
    I=${SLURM_ARRAY_TASK_ID:?not inside a Slurm array task}
    A=$((I * SAMPLES / N))
    B=$(((I + 1) * SAMPLES / N))
    # ACCURACY_ARGS is split into words on purpose, and not expanded as file names
    # (--layers 'fc*').
    set -f
    # shellcheck disable=SC2086
    exec "$SRESIM" accuracy $ACCURACY_ARGS --samples "$SAMPLES" --sample-range "$A..$B" \
        --threads "${SLURM_CPUS_PER_TASK:-1}" --quiet --out "$OUT/shards/$I-of-$N"
    ;;
merge)
    # After every task: join the shards. The merge checks that they belong to one run
    # and hold every sample once, so a shard missing from the list is named.
    exec "$SRESIM" accuracy-merge "$OUT"/shards/*-of-"$N" --out "$OUT"
    ;;
*)
    echo "usage: $0 [submit|task|merge]" >&2
    exit 2
    ;;
esac
