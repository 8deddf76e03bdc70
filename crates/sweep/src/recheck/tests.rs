//! Tests of the cell recheck: the glance, the number forms, the domains.

use super::*;

/// What the glance accepts parses as its kind and passes the gate; the rest goes to
/// the full parse.
#[test]
fn the_glance_accepts_only_what_a_writer_prints() {
    // Every cell the glance passes is its number's own text; the others are parsed
    // and must print back as themselves.
    let cells = [
        "0",
        "-0",
        "0.5",
        "12.25",
        "100",
        "0.000123",
        "123456789012345",
        "1.5e3",
        "+0.5",
        ".5",
        "5.",
        "0.50",
        "00.5",
        "-01",
        "1.0",
        "0.1000000000000000055511",
        "0.30000000000000004",
        "0.10000000000000001",
        "0.006117677463342896",
        "1234567890.12345",
    ];
    for c in cells {
        let printed = c.parse::<f64>().map(|v| v.to_string());
        if plain(Kind::Float, c.as_bytes()) {
            // Its number's own text, or (16 or 17 digits) another text of that number.
            let v: f64 = c.parse().unwrap();
            assert!(v.is_finite(), "{c}");
            assert_eq!(v.to_string().parse::<f64>(), Ok(v), "the glance passed {c}");
            let digits = c.bytes().filter(u8::is_ascii_digit).count();
            assert!(
                printed.as_deref() == Ok(c) || digits >= 16,
                "the glance passed {c}"
            );
        }
        let full = canonical("x", c, c.parse().unwrap_or(f64::NAN)).is_ok();
        assert_eq!(full, printed.as_deref() == Ok(c), "{c}");
    }
    for c in ["1e-400", "+0.5", ".5", "0.50", "00.5", "1.0", "1.5e3"] {
        assert!(!plain(Kind::Float, c.as_bytes()), "{c}");
        let e = canonical("top1", c, c.parse().unwrap()).unwrap_err();
        assert!(
            e.starts_with(&format!("top1: '{c}' is not a number as sresim writes one")),
            "{e}"
        );
    }
}

#[test]
fn the_glance_accepts_only_what_the_full_parse_would() {
    let ok = [
        (Kind::Count, "0"),
        (Kind::Count, "9999999999999999999"),
        (Kind::Int, "-123"),
        (Kind::Float, "0.5"),
        (Kind::Float, "-12"),
        (Kind::Bool, "true"),
    ];
    for (k, c) in ok {
        assert!(plain(k, c.as_bytes()), "{c}");
    }
    let not = [
        (Kind::Count, "18446744073709551615"),
        (Kind::Count, "-1"),
        (Kind::Count, "1.5"),
        (Kind::Int, "1e3"),
        (Kind::Float, "NaN"),
        (Kind::Float, "inf"),
        (Kind::Float, "1e400"),
        (Kind::Float, "1.2.3"),
        (Kind::Float, "."),
        (Kind::Float, "-"),
        (Kind::Bool, "yes"),
        (Kind::Count, "007"),
        (Kind::Int, "-01"),
        (Kind::Text, "evil\0"),
        (Kind::Text, "a\u{1b}[31m"),
    ];
    for (k, c) in not {
        assert!(!plain(k, c.as_bytes()), "{c}");
    }
    assert!(!plain(Kind::Float, "9".repeat(301).as_bytes()));
    assert!(plain(
        Kind::Float,
        format!("1{}", "0".repeat(299)).as_bytes()
    ));
    assert!(!plain(Kind::Float, "9".repeat(300).as_bytes()));
    assert_eq!(number::<u64>("007"), None);
    assert_eq!(number::<i64>("-0"), None);
    assert_eq!(number::<u64>("0"), Some(0));
    assert!(plain(Kind::Text, "t56".as_bytes()) && plain(Kind::Text, "conv µ".as_bytes()));
    assert!("9".repeat(300).parse::<f64>().unwrap().is_finite());
}
