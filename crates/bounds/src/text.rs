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

#[cfg(test)]
mod tests {
    use super::*;

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
