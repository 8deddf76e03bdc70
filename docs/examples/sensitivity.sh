#!/bin/sh
# Runs the sensitivity studies of configs/sweeps/ and draws the plots of docs/sweeps.md
# (docs/plots/sweep-*.svg). Run from the repository root:
#
#   sh docs/examples/sensitivity.sh            # results under out/sweeps/
#
# A finished study is not run again (--resume finds every point done); delete its
# directory under out/sweeps/ to recompute it.
set -eu
SRESIM=${SRESIM:-target/release/sresim}
OUT=${OUT:-out/sweeps}
PLOTS=${PLOTS:-docs/plots}
[ -x "$SRESIM" ] || cargo build --release
mkdir -p "$OUT" "$PLOTS"

for study in ou-size crossbar-size cell-bits adcs precision ssl-sparsity; do
    "$SRESIM" sweep --grid "configs/sweeps/$study.toml" --out "$OUT/$study" --resume
done

W=workload=mobilenetv2-nsfwjs-pruned
plot() { "$SRESIM" plot "$@"; }
plot "$OUT/ou-size" --x ou.rows --y speedup_vs_dense --where $W --where ou.cols=8 \
    --log-x -o "$PLOTS/sweep-ou-rows-speedup.svg"
plot "$OUT/ou-size" --x ou.rows --y time_ns --where $W --where ou.cols=8 \
    --log-x --log-y -o "$PLOTS/sweep-ou-rows-time.svg"
plot "$OUT/ou-size" --x ou.cols --y speedup_vs_dense --where $W --where ou.rows=9 \
    --log-x -o "$PLOTS/sweep-ou-cols-speedup.svg"
plot "$OUT/ou-size" --x ou.rows --y speedup_vs_dense --series workload --where mode=sre \
    --where ou.cols=8 --log-x -o "$PLOTS/sweep-ou-rows-workloads.svg"
plot "$OUT/crossbar-size" --x crossbar.rows --y speedup_vs_dense --where $W \
    --log-x -o "$PLOTS/sweep-crossbar-size.svg"
plot "$OUT/cell-bits" --x crossbar.cell_bits --y energy_pj --where $W \
    -o "$PLOTS/sweep-cell-bits-energy.svg"
plot "$OUT/adcs" --x adc.per_crossbar --y time_ns --where $W \
    --log-x --log-y -o "$PLOTS/sweep-adcs-time.svg"
plot "$OUT/precision" --x precision.input_bits --y speedup_vs_dense \
    --series mode,precision.weight_bits --where $W --where mode=weight --where mode=sre \
    -o "$PLOTS/sweep-precision.svg"
plot "$OUT/precision" --x precision.weight_bits --y speedup_vs_dense --where $W \
    --where precision.input_bits=16 -o "$PLOTS/sweep-precision-weight-bits.svg"
plot "$OUT/ssl-sparsity" --x synth.weight_sparsity --y speedup_vs_dense \
    --where workload=resnet20 --where synth.act_sparsity=0.5 --log-y \
    -o "$PLOTS/sweep-ssl-weight.svg"
plot "$OUT/ssl-sparsity" --x synth.weight_sparsity --y speedup_vs_dense \
    --series synth.act_sparsity --where workload=resnet20 --where mode=sre --log-y \
    -o "$PLOTS/sweep-ssl-act.svg"
