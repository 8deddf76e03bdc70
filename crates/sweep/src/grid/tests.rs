use super::*;
use crate::plan::Plan;

fn grid(text: &str) -> Grid {
    Grid::parse(text, Path::new("g.toml"), DEFAULT_MAX_POINTS).unwrap()
}

/// A number the parser cannot hold was told without its field (`s.toml: number too
/// large to fit in target type`); the message names line, table and key.
#[test]
fn a_toml_error_names_its_line_and_field() {
    let e = Grid::parse(
            "workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = [4]\n[search]\nfirst_samples = 18446744073709551615\n",
            Path::new("s.toml"),
            DEFAULT_MAX_POINTS,
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.toml: line 5: search.first_samples: "),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
    let e = Grid::parse(
        "workloads = [\"lenet5\"]\nsamples = 99999999999999999999\n",
        Path::new("g.toml"),
        9,
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("g.toml: line 2: samples: "), "{e}");
    assert!(e.ends_with("99999999999999999999 is above the largest integer a grid holds, 9223372036854775807 (TOML integers stop at 2^63 - 1)"), "{e}");
    // A seed past 2^63 - 1 is told with the reach of `run --seed`.
    let e = Grid::parse(
        "workloads = [\"lenet5\"]\n[axes]\n\"synth.seed\" = [1, 18446744073709551615]\n",
        Path::new("g.toml"),
        9,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(e, "g.toml: line 3: axes.synth.seed: 18446744073709551615 is above the largest integer a grid holds, 9223372036854775807 (TOML integers stop at 2^63 - 1): the largest seed a grid can hold is 2^63 - 1; `run --seed` takes up to 2^64 - 1");
}

/// A top-level key written as a table (a list expected, or a key the grid does not
/// have) is named by its key, not by the line alone.
#[test]
fn a_table_where_a_key_is_wrong_is_named_by_its_key() {
    for (text, want) in [
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = [4]\n[modes]\nx = 1\n",
            "g.toml: line 4: modes: ",
        ),
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = [4]\n[nonsense]\nx = 1\n",
            "g.toml: line 4: nonsense: ",
        ),
        ("[workloads]\na = 1\n", "g.toml: line 1: workloads: "),
    ] {
        let e = Grid::parse(text, Path::new("g.toml"), DEFAULT_MAX_POINTS)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(want), "{want}: {e}");
        assert_eq!(e.lines().count(), 1);
    }
}

/// A string value is a cell of points.csv: one holding an escape reached the file and
/// the terminal raw; it is refused naming the axis (or the fixed key, or the point).
#[test]
fn a_string_value_with_a_control_character_is_refused() {
    for text in [
        "workloads = [\"lenet5\"]\n[axes]\n\"energy.table\" = [\"e\\u001b[2J.toml\"]\n",
        "workloads = [\"lenet5\"]\n[set]\n\"synth.structure\" = \"ssl\\u0007\"\n",
        "workloads = [\"lenet5\"]\n[[points]]\n\"synth.structure\" = \"a\\nb\"\n",
    ] {
        let e = Grid::parse(text, Path::new("g.toml"), DEFAULT_MAX_POINTS)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds a control character"), "{e}");
        assert!(!e.chars().any(char::is_control), "{e:?}");
    }
}

#[test]
fn fnv64_known_values() {
    // FNV-1a 64 test vectors: "" is the offset basis, "a" = 0xaf63dc4c8601ec8c.
    assert_eq!(fnv64(""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv64("a"), 0xaf63_dc4c_8601_ec8c);
}

#[test]
fn product_order_and_explicit_points() {
    let g = grid(
            "workloads = [\"lenet5\", \"cifar10\"]\n[axes]\nadc.per_crossbar = [1, 2]\n\"ou.rows\" = [4]\n\
             [[points]]\n\"ou.cols\" = 8\n\"crossbar.rows\" = 64\n[[points]]\n\"crossbar.rows\" = 128\n\"ou.cols\" = 16\n",
        );
    assert_eq!(
        g.axis_keys(),
        ["adc.per_crossbar", "ou.rows", "ou.cols", "crossbar.rows"]
    );
    let pts: Vec<String> = g
        .points()
        .iter()
        .map(|p| {
            let v: Vec<String> = p.values.iter().map(AxisValue::csv).collect();
            format!("{} {}", p.workload, v.join(","))
        })
        .collect();
    assert_eq!(
        pts,
        [
            "lenet5 1,4,8,64",
            "lenet5 1,4,16,128",
            "lenet5 2,4,8,64",
            "lenet5 2,4,16,128",
            "cifar10 1,4,8,64",
            "cifar10 1,4,16,128",
            "cifar10 2,4,8,64",
            "cifar10 2,4,16,128",
        ]
    );
}

#[test]
fn ids_depend_on_the_point_not_on_the_file_order() {
    let a = grid("workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = [4, 8]\n\"ou.cols\" = [4, 16]\n");
    let b = grid("workloads = [\"lenet5\"]\n[axes]\n\"ou.cols\" = [16, 4]\n\"ou.rows\" = [8, 4]\n");
    let ids = |g: &Grid| {
        let mut v: Vec<String> = g.points().into_iter().map(|p| p.id).collect();
        v.sort();
        v
    };
    assert_eq!(ids(&a), ids(&b));
    assert!(ids(&a).iter().all(|id| id.len() == 12));
    let four = AxisValue::Int(4);
    assert_ne!(
        point_id("lenet5", &[("ou.rows", &four)]),
        point_id("cifar10", &[("ou.rows", &four)])
    );
    assert_ne!(
        point_id("lenet5", &[("ou.rows", &four)]),
        point_id("lenet5", &[("ou.rows", &AxisValue::Float(4.0))])
    );
    // Same points, same fingerprint; another column order or a fixed key changes it.
    let fp = |g: Grid| Plan::new(g).unwrap().fingerprint;
    let a2 =
        grid("workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = [8, 4]\n\"ou.cols\" = [16, 4]\n");
    assert_eq!(fp(a.clone()), fp(a2));
    assert_ne!(fp(a.clone()), fp(b));
    let fixed = grid("workloads = [\"lenet5\"]\n[set]\n\"adc.per_crossbar\" = 4\n[axes]\n\"ou.rows\" = [4, 8]\n\"ou.cols\" = [4, 16]\n");
    assert_ne!(fp(a), fp(fixed));
}

#[test]
fn sweep_json_regenerates_every_point_id_and_row_count() {
    let g = grid(
            "workloads = [\"lenet5\", \"cifar10\"]\nmodes = [\"dense\", \"sre\"]\nsamples = 1\n\
             [axes]\n\"synth.weight_sparsity\" = [0.5, 1]\n\"synth.structure\" = [\"ssl\"]\n\
             [[points]]\n\"ou.cols\" = 8\n\"crossbar.rows\" = 64\n[[points]]\n\"crossbar.rows\" = 128\n\"ou.cols\" = 16\n",
        );
    let plan = Plan::new(g).unwrap();
    let meta = crate::store::Meta::of(&plan, None, Default::default());
    // Through the JSON text, as merge and resume read it.
    let meta: crate::store::Meta = serde_json::from_slice(&meta.json().unwrap()).unwrap();
    let ids = meta.ids();
    assert_eq!(ids.len(), 8);
    for (i, p) in plan.points.iter().enumerate() {
        assert_eq!(ids.text(i), p.id);
        assert_eq!(ids.get(&p.id), Some(&(i as u32)));
        assert_eq!(meta.rows(i), plan.rows[i], "point {i}");
    }
    assert_eq!(ids.get("0123456789ab"), None);
    assert_eq!(ids.get(&plan.points[0].id.to_uppercase()), None);
}

/// The one grid parser bounds every command's grid (`sweep` and `search`): the point
/// count is a checked product, refused above --max-points and above 2^26 before any
/// point is listed. (`search` listed every point of any grid: 10^8 points aborted.)
#[test]
fn point_counts_are_checked_products_within_the_limits() {
    let axes = |n: usize, values: usize| {
        let list: Vec<String> = (1..=values).map(|v| v.to_string()).collect();
        let keys = [
            "ou.rows",
            "ou.cols",
            "adc.per_crossbar",
            "synth.seed",
            "dac.bits",
            "adc.bits",
            "crossbar.rows",
        ];
        let mut t = "workloads = [\"lenet5\"]\n[axes]\n".to_string();
        for k in &keys[..n] {
            t += &format!("\"{k}\" = [{}]\n", list.join(", "));
        }
        t
    };
    let parse = |t: &str, max| Grid::parse(t, Path::new("g.toml"), max);
    let e = |t: &str, max| parse(t, max).unwrap_err().to_string();
    // 600^7 = 2.8e19 wraps u64.
    assert_eq!(
        e(&axes(7, 600), u64::MAX),
        "g.toml: the grid has more than 2^64 points, more than the limit of 67108864 a grid holds"
    );
    assert_eq!(
        e(&axes(3, 500), u64::MAX),
        "g.toml: the grid has 125000000 points, more than the limit of 67108864 a grid holds"
    );
    assert_eq!(
            e(&axes(2, 400), DEFAULT_MAX_POINTS),
            "g.toml: the grid has 160000 points, more than --max-points 100000 (raise it, e.g. --max-points 160000, if that is meant)"
        );
    let g = parse(&axes(2, 400), 160_000).unwrap();
    assert_eq!(g.point_count(), 160_000);
    assert_eq!(g.points().len(), 160_000);
    // Explicit points and workloads count too.
    let t = "workloads = [\"lenet5\", \"cifar10\"]\n[axes]\n\"ou.rows\" = [4, 8]\n\
                 [[points]]\n\"ou.cols\" = 8\n[[points]]\n\"ou.cols\" = 16\n[[points]]\n\"ou.cols\" = 4\n";
    assert_eq!(parse(t, 12).unwrap().point_count(), 12);
    assert!(e(t, 11).contains("the grid has 12 points, more than --max-points 11"));
    // The count comes from the lengths of the lists, before any value is looked at:
    // a list over the limit is refused as such, whatever it holds (its values were
    // once compared pairwise first, hours for 10^6 of them).
    let list = |n: usize| (0..n).map(|v| (v % 7).to_string()).collect::<Vec<_>>();
    let t = format!(
        "workloads = [\"lenet5\"]\n[axes]\n\"synth.seed\" = [{}]\n",
        list(200_000).join(",")
    );
    assert!(e(&t, DEFAULT_MAX_POINTS)
        .contains("the grid has 200000 points, more than --max-points 100000"));
    let t = format!(
        "workloads = [\"lenet5\"]\n{}",
        list(200_000)
            .iter()
            .map(|v| format!("[[points]]\n\"synth.seed\" = {v}\n"))
            .collect::<String>()
    );
    assert!(e(&t, DEFAULT_MAX_POINTS)
        .contains("the grid has 200000 points, more than --max-points 100000"));
    // A sweep over as many seeds as the default allows, one axis or explicit points.
    let seeds = (1..=DEFAULT_MAX_POINTS)
        .map(|v| v.to_string())
        .collect::<Vec<_>>();
    let t = format!(
        "workloads = [\"lenet5\"]\n[axes]\n\"synth.seed\" = [{}]\n",
        seeds.join(",")
    );
    assert_eq!(
        parse(&t, DEFAULT_MAX_POINTS).unwrap().point_count(),
        DEFAULT_MAX_POINTS
    );
    let t = format!(
        "workloads = [\"lenet5\"]\n{}",
        seeds
            .iter()
            .map(|v| format!("[[points]]\n\"synth.seed\" = {v}\n"))
            .collect::<String>()
    );
    assert_eq!(
        parse(&t, DEFAULT_MAX_POINTS).unwrap().point_count(),
        DEFAULT_MAX_POINTS
    );
}

#[test]
fn explicit_points_must_agree_on_keys() {
    let err = |t: &str| {
        Grid::parse(t, Path::new("g.toml"), DEFAULT_MAX_POINTS)
            .unwrap_err()
            .to_string()
    };
    let e =
        err("workloads = [\"lenet5\"]\n[[points]]\n\"ou.rows\" = 4\n[[points]]\n\"ou.cols\" = 4\n");
    assert!(e.starts_with("g.toml: points[1]: has no ou.rows"), "{e}");
    let e =
        err("workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = [4]\n[[points]]\n\"ou.rows\" = 4\n");
    assert!(e.contains("points[0].ou.rows: also an axis"), "{e}");
    let e = err("workloads = [\"lenet5\"]\n[set]\n\"ou.rows\" = 4\n[axes]\n\"ou.rows\" = [4]\n");
    assert!(e.contains("set.ou.rows: also varied"), "{e}");
    let e = err("workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = [[4]]\n");
    assert!(e.contains("axes.ou.rows: [4] is not a number"), "{e}");
}

/// A TOML date in a grid was told in the TOML reader's private words
/// (`set.energy.table.$__toml_private_datetime: unknown key`, `{ "$__toml_private_datetime"
/// = ... }`): it is told as a date, by its key, in an axis, a set table and a point.
#[test]
fn a_toml_date_in_a_grid_is_told_as_a_date() {
    let parse = |text: &str| {
        Grid::parse(text, Path::new("g.toml"), DEFAULT_MAX_POINTS)
            .unwrap_err()
            .to_string()
    };
    let e = parse("workloads = [\"lenet5\"]\n[set]\n\"energy.table\" = 1979-05-27\n");
    assert_eq!(
        e,
        "g.toml: set.energy.table: a date (1979-05-27), expected a number, string or boolean"
    );
    let e = parse("workloads = [\"lenet5\"]\n[axes]\n\"mapping.layout\" = [1979-05-27]\n");
    assert!(
        e.starts_with("g.toml: axes.mapping.layout") && e.contains("a date (1979-05-27), expected"),
        "{e}"
    );
    let e = parse("workloads = [\"lenet5\"]\n[[points]]\n\"ou.rows\" = 07:32:00\n");
    assert!(e.contains("ou.rows: a time (07:32:00), expected"), "{e}");
    assert!(!e.contains("toml_private"), "{e}");
    // In the [search] table and the top-level keys too (the reader's private key, or
    // `invalid type: map`, was shown).
    let e = parse("workloads = [\"lenet5\"]\n[search]\nfirst_samples = 1979-05-27\n");
    assert_eq!(
        e,
        "g.toml: search.first_samples: a date (1979-05-27), expected a number, string or boolean"
    );
    let e = parse("workloads = [\"lenet5\"]\naccuracy_samples = 1979-05-27\n");
    assert_eq!(
        e,
        "g.toml: accuracy_samples: a date (1979-05-27), expected an integer"
    );
    let e = parse("workloads = [07:32:00]\n");
    assert_eq!(e, "g.toml: workloads: a time (07:32:00), expected a string");
}
