//! The one rule for text that comes from a data file (a CSV cell, a column name, a
//! bundle folder's name) and is shown to a person: [`printable`] escapes every character
//! a terminal would obey or an XML document cannot hold, so a cell `c1<ESC>[2J` neither
//! clears the screen of `sresim compare` nor breaks the SVG of `sresim plot`
//! (docs/errors.md, "Text from data files"). Every surface that prints such text (the
//! error line, `compare`, `workloads`, every chart's texts) passes it through here.

use std::borrow::Cow;

/// Whether `c` is shown as it is: not a control character (C0, DEL, C1: a terminal
/// obeys them, XML 1.0 forbids most of them) and not U+FFFE or U+FFFF (outside XML
/// 1.0's characters).
fn shown(c: char) -> bool {
    !(c.is_control() || c == '\u{fffe}' || c == '\u{ffff}')
}

/// `s` with every character that is not [`shown`] written as Rust's escape of it
/// (`\u{1b}`, `\n`, `\t`); `s` itself (borrowed) when it has none. A backslash is kept
/// as it is, so a name without control characters reads the same.
pub fn printable(s: &str) -> Cow<'_, str> {
    if s.chars().all(shown) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match shown(c) {
            true => out.push(c),
            false => out.extend(c.escape_debug()),
        }
    }
    Cow::Owned(out)
}

/// `s` line by line through [`printable`]: its line breaks kept (a listing of several
/// lines), every other character escaped as [`printable`] does.
/// A path the user gave, or one built from a data file's text, as a line may show it
/// ([`printable`] of its display): the "wrote ..." and "ok: ..." lines print paths.
pub fn path(p: &std::path::Path) -> String {
    printable(&p.display().to_string()).into_owned()
}

/// [`printable`] of each line of `s`, the line breaks kept.
pub fn printable_lines(s: &str) -> String {
    s.split('\n').map(printable).collect::<Vec<_>>().join("\n")
}

/// FNV-1a, 64 bits: a hash that is the same on every machine and every Rust release.
pub fn fnv64(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A file name made of data (column names, a group's values), bounded: `name` itself
/// when it is at most `max` bytes, else its first part (cut at a character boundary)
/// and `-` and 16 hex digits of [`fnv64`] of `whole` (what the name was made from), so
/// that two long names stay apart and every name fits a file system's 255 bytes. The one
/// bound of a default output name (`plot`'s figure, `search`'s Pareto plots); `max` is
/// at least 17.
pub fn bounded_name(name: &str, max: usize, whole: &str) -> String {
    if name.len() <= max {
        return name.to_string();
    }
    let mut cut = max.saturating_sub(17);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{:016x}", &name[..cut], fnv64(whole))
}

/// Words of a float's long `Display` form longer than this are written short.
const LONG_NUMBER_CHARS: usize = 24;

/// `msg` with every number written in a float's long `Display` form (`-0.000...01`,
/// `1000...0`, more than 24 characters: what `{}` of a tiny or huge f64 prints, whether
/// a check of sresim's or a library such as serde quoted it) in its [`crate::finite::short`]
/// form. A word is rewritten only when it is exactly the `Display` text of the f64 it
/// parses to (or that text and `.0`), so an integer of a count that is not such a text is
/// kept as it is, and only when it stands alone: a path, a name or a quoted value that
/// holds such digits is the user's text, quoted as given. The
/// one error line of every command passes through here (docs/errors.md), so no message
/// site can print a float long.
pub fn shorten_numbers(msg: &str) -> Cow<'_, str> {
    let long = |w: &str| -> Option<(usize, usize, String)> {
        let start = w.find(|c: char| c == '-' || c.is_ascii_digit())?;
        let end = w.rfind(|c: char| c.is_ascii_digit())? + 1;
        let core = w.get(start..end)?;
        // A number standing alone (after a space, a backtick or an opening bracket, before
        // punctuation), never part of a path, a name or a quoted value a user gave
        // (`d1000...0/manifest.json`, `--set k=t1000...0.toml`, `"1000...0"`).
        let (before, after) = (&w[..start], &w[end..]);
        let alone = matches!(before, "" | "`" | "(" | "[" | "{")
            && after.chars().all(|c| "`)]},:;%.".contains(c));
        if !alone {
            return None;
        }
        let digits = core.strip_prefix('-').unwrap_or(core);
        let (int, frac) = digits.split_once('.').unwrap_or((digits, "0"));
        let plain = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if core.len() <= LONG_NUMBER_CHARS || !plain(int) || !plain(frac) {
            return None;
        }
        let v: f64 = core.parse().ok()?;
        // Rust's `{}`, or TOML's, which adds `.0` to a whole number.
        let text = v.to_string();
        (text == core || format!("{text}.0") == core).then(|| (start, end, crate::finite::short(v)))
    };
    if !msg.split(' ').any(|w| long(w).is_some()) {
        return Cow::Borrowed(msg);
    }
    let words: Vec<String> = msg
        .split(' ')
        .map(|w| match long(w) {
            Some((start, end, short)) => format!("{}{short}{}", &w[..start], &w[end..]),
            None => w.to_string(),
        })
        .collect();
    Cow::Owned(words.join(" "))
}

/// How a message tells a TOML date, time or date-time `text` (its TOML form) that stands
/// where no key takes one: `a date (1979-05-27)`. Never the TOML reader's private wrapper
/// (`$__toml_private_datetime`) nor a Rust type name (docs/errors.md, "Files").
pub fn toml_date(text: &str) -> String {
    let has_date = text.len() >= 10 && text.as_bytes().get(4) == Some(&b'-');
    let has_time = text.contains(':');
    let what = match (has_date, has_time) {
        (true, true) => "a date and time",
        (true, false) => "a date",
        _ => "a time",
    };
    format!("{what} ({})", printable(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_float_forms_become_short() {
        for v in [-1e-300, 1e-300, 1e300, -1e300, 1.5e-200, 2.5e100] {
            let long = format!("{v}");
            assert!(long.len() > 100);
            let msg = format!("k: {long} is not in [0, 1); floating point `{long}`, ({long})");
            let short = shorten_numbers(&msg);
            let e = format!("{v:e}");
            assert_eq!(
                short,
                format!("k: {e} is not in [0, 1); floating point `{e}`, ({e})")
            );
        }
        assert_eq!(shorten_numbers(&format!("{}.0", 1e300)), "1e300");
        assert_eq!(crate::finite::short(0.5), "0.5");
        assert_eq!(crate::finite::short(-1e-300), "-1e-300");
        assert_eq!(crate::finite::short(0.0), "0");
        // A user's text that holds such digits is quoted as given: paths, a --set's value,
        // a quoted name.
        let n = "100000000000000000000000000";
        for msg in [
            format!("d{n}/manifest.json: cannot read: does not exist"),
            format!("--set energy.table=t{n}.toml: energy.table: configs/t{n}.toml does not exist"),
            format!("o/{n}: not a directory"),
            format!("layers[1].name: \"{n}\" repeats layers[0]"),
            format!("k={n}: {n}x is no number"),
        ] {
            assert!(matches!(shorten_numbers(&msg), Cow::Borrowed(_)), "{msg}");
        }
        assert_eq!(
            shorten_numbers(&format!("`{n}`, ({n}): {n}.")),
            "`1e26`, (1e26): 1e26."
        );
        // Counts and short numbers are kept; so is a long integer that is no float's text.
        for msg in [
            "9223372036854775831 + 9223372036854775807 overflows 64 bits",
            "340282366920938463463374607431768211455 bytes",
            "0.1 and 12345.5 and -3",
            "a 0.1000000000000000000000000000001 typed by hand",
        ] {
            assert!(matches!(shorten_numbers(msg), Cow::Borrowed(_)), "{msg}");
        }
    }

    #[test]
    fn a_long_name_is_cut_with_the_hash_of_the_whole() {
        assert_eq!(bounded_name("short", 20, "x"), "short");
        assert_eq!(bounded_name(&"a".repeat(20), 20, "x"), "a".repeat(20));
        let long = "é".repeat(40);
        let b = bounded_name(&long, 30, &long);
        assert!(b.len() <= 30, "{b}");
        assert_eq!(b, format!("{}-{:016x}", "é".repeat(6), fnv64(&long)));
        assert_ne!(b, bounded_name(&"é".repeat(41), 30, &"é".repeat(41)));
        assert_eq!(fnv64(""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn control_and_xml_invalid_characters_are_escaped_and_nothing_else() {
        assert_eq!(printable("c1\u{1b}[2J"), "c1\\u{1b}[2J");
        assert_eq!(printable("a\tb\nc\r\0"), "a\\tb\\nc\\r\\0");
        assert_eq!(
            printable("x\u{7f}\u{85}\u{fffe}\u{ffff}"),
            "x\\u{7f}\\u{85}\\u{fffe}\\u{ffff}"
        );
        // Printable text, backslashes, quotes and non-ASCII letters are left as they are.
        for s in ["conv µ", "a\\b", "\"q\" 'r' <t>&", "层", ""] {
            assert!(matches!(printable(s), Cow::Borrowed(b) if b == s));
        }
        assert_eq!(printable_lines("a\u{1b}\nb\n"), "a\\u{1b}\nb\n");
        // No character of the result is one a terminal obeys or XML refuses.
        let all: String = (0u32..0x3_0000).filter_map(char::from_u32).collect();
        assert!(printable(&all).chars().all(shown));
    }
}
