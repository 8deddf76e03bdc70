"""scripts/bench, scripts/bench-merge, scripts/check-identical and scripts/test-slurm check their arguments
before anything is built or run (docs/errors.md, "Scripts"): `--help` prints the usage
and exits 0, a wrong argument is one `error: ...` line and exit status 2, and
bench-merge never empties a scratch directory it did not make. `cargo` here is a stand-in
on PATH that leaves a mark and fails, so no benchmark is ever built or run."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def fake(tmp_path):
    """A folder with a `cargo` that leaves `cargo-ran` beside it and fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cargo = bin_dir / "cargo"
    cargo.write_text(f"#!/bin/sh\ntouch {tmp_path / 'cargo-ran'}\nexit 1\n")
    cargo.chmod(0o755)
    return tmp_path


def script(name, *args, cwd, stdout=subprocess.PIPE):
    env = {k: v for k, v in os.environ.items() if k not in ("SRESIM_BIN", "BENCH_PROFILE")}
    env["PATH"] = f"{cwd / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(["bash", os.path.join(ROOT, "scripts", name), *map(str, args)],
                          stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env,
                          timeout=60)


def refused(r, says):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert says in lines[0], r.stderr
    assert r.stdout == "", r.stdout


@pytest.mark.parametrize("name", ["bench", "bench-merge", "check-identical", "test-slurm"])
def test_help_prints_the_usage_and_builds_nothing(fake, name):
    r = script(name, "--help", cwd=fake)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.count("\n") > 3 and "scripts/" in r.stdout, r.stdout
    assert not r.stdout.startswith("#!"), r.stdout
    assert not (fake / "cargo-ran").exists(), "cargo ran for --help"


@pytest.mark.parametrize("name", ["bench", "bench-merge", "check-identical", "test-slurm"])
def test_help_to_a_full_stdout_is_one_line(fake, name):
    with open("/dev/full", "w") as full:
        r = script(name, "--help", cwd=fake, stdout=full)
    assert r.returncode == 1, r.stderr
    assert r.stderr == "error: stdout: cannot write: No space left on device\n", r.stderr
    assert not (fake / "cargo-ran").exists()


@pytest.mark.parametrize("args,says", [
    (["--bogus"], "unknown flag --bogus"),
    (["--quik"], "unknown flag --quik"),
    (["cifar10", "--x"], "unknown flag --x"),
    (["--quick", "extra"], "--quick takes no more arguments: extra"),
    (["--per-sample", "0"], "--per-sample: PAIRS '0' is not a whole number"),
    (["--per-sample", "x"], "--per-sample: PAIRS 'x' is not a whole number"),
    (["--per-sample", "3", "4"], "--per-sample takes one PAIRS at most: 4"),
])
def test_bench_refuses_a_wrong_argument_before_building(fake, args, says):
    refused(script("bench", *args, cwd=fake), says)
    assert not (fake / "cargo-ran").exists(), "cargo ran before the arguments were checked"


def test_bench_still_builds_for_its_modes(fake):
    # the stand-in cargo fails: the build was reached, nothing after it ran
    for args in ([], ["--quick"], ["--per-sample", "2"], ["cifar10"], ["--", "--save-baseline", "x"]):
        r = script("bench", *args, cwd=fake)
        assert r.returncode == 1 and (fake / "cargo-ran").exists(), (args, r.stderr)
        os.unlink(fake / "cargo-ran")


@pytest.mark.parametrize("args,says", [
    (["--bogus"], "POINTS '--bogus' is not a whole number of 1 or more"),
    (["0"], "POINTS '0' is not a whole number"),
    (["10", "x"], "ROWS 'x' is not a whole number"),
    (["10", "66", "-1"], "SHARDS '-1' is not a whole number"),
    (["99999999999999999999"], "POINTS '99999999999999999999' is not a whole number"),
    (["1", "2", "3", "d", "5"], "at most 4 arguments"),
])
def test_bench_merge_refuses_a_wrong_count_before_building(fake, args, says):
    refused(script("bench-merge", *args, cwd=fake), says)
    assert not (fake / "cargo-ran").exists()


def test_bench_merge_leaves_a_directory_it_did_not_make(fake):
    mine = fake / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("the user's\n")
    refused(script("bench-merge", 10, 66, 4, "mine", cwd=fake),
            "SCRATCH_DIR mine: not empty and not made by scripts/bench-merge")
    assert (mine / "keep.txt").read_text() == "the user's\n"
    (fake / "file").write_text("x")
    os.symlink(mine, fake / "link")
    for name in ("file", "link"):
        refused(script("bench-merge", 10, 66, 4, name, cwd=fake),
                f"SCRATCH_DIR {name}: exists and is not a directory")
    assert not (fake / "cargo-ran").exists()
    assert sorted(os.listdir(mine)) == ["keep.txt"]


def test_bench_merge_takes_a_new_empty_or_own_directory(fake):
    # accepted: the build is reached (the stand-in cargo fails), nothing is removed
    (fake / "empty").mkdir()
    own = fake / "own"
    own.mkdir()
    (own / ".bench-merge-scratch").write_text("")
    (own / "shard-0").mkdir()
    for name in ("new", "empty", "own"):
        r = script("bench-merge", 10, 66, 4, name, cwd=fake)
        assert r.returncode == 1 and (fake / "cargo-ran").exists(), (name, r.stderr)
        os.unlink(fake / "cargo-ran")
    assert (own / "shard-0").is_dir()


@pytest.mark.parametrize("args,says", [
    (["--bogus", "out"], "unknown flag --bogus"),
    (["nonexistent-bin", "out"], "BIN nonexistent-bin: not an executable file"),
    (["only-one"], "expected BIN OUTDIR or --compare OLD NEW"),
    (["--compare", "a"], "expected BIN OUTDIR or --compare OLD NEW"),
])
def test_check_identical_refuses_a_wrong_argument_before_running(fake, args, says):
    refused(script("check-identical", *args, cwd=fake), says)
    assert not (fake / "out").exists()


@pytest.mark.parametrize("name", ["check-circles", "check-docs", "check-layout"])
def test_check_scripts_help_and_a_bad_flag(tmp_path, name):
    path = os.path.join(ROOT, "scripts", name)
    with open("/dev/full", "w") as full:
        r = subprocess.run(["python3", path, "--help"], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr == "error: stdout: cannot write: No space left on device\n", r.stderr
    r = subprocess.run(["python3", path, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout and r.stderr == "", r.stderr
    r = subprocess.run(["python3", path, "--bogus"], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    refused(r, "--bogus")


@pytest.mark.parametrize("args", [["--bogus"], ["x"], ["--help-me"]])
def test_test_slurm_takes_no_argument(fake, args):
    """It went straight to `cargo build`, apt-get and the Slurm daemons for any argument."""
    refused(script("test-slurm", *args, cwd=fake), f"test-slurm takes no argument: {args[0]}")
    assert not (fake / "cargo-ran").exists(), "cargo ran before the arguments were checked"


@pytest.mark.parametrize("args,says", [
    (["999999999999999999", "1", "1"], "POINTS 999999999999999999: more than a grid holds"),
    (["100000", "100000", "4"], "POINTS x ROWS = 100000 x 100000: more than 3 x 10^7 rows"),
    (["1", "999999999999999999", "1"], "more than 3 x 10^7 rows"),
    (["4", "66", "5"], "SHARDS 5: more than the 4 points"),
])
def test_bench_merge_refuses_sizes_beyond_what_a_run_holds(fake, args, says):
    """Only the digit count was bounded: sizes that would fill the disk passed."""
    refused(script("bench-merge", *args, cwd=fake), says)
    assert not (fake / "cargo-ran").exists(), "cargo ran before the sizes were checked"
