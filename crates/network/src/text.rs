//! Quoting user input in messages: an error is one line, and a hostile input (a 15 KB
//! nested .npy header, a megabyte-long layer name) must not make it a page.

/// Most characters of user input quoted in a message.
pub const MAX_QUOTED_CHARS: usize = 80;

/// `s` cut to [`MAX_QUOTED_CHARS`] characters, with how much was left out; whole when
/// shorter. Line breaks become spaces, so the message stays one line.
pub fn clip(s: &str) -> String {
    clip_to(s, MAX_QUOTED_CHARS)
}

/// `s` cut to `max` characters (see [`clip`]).
pub fn clip_to(s: &str, max: usize) -> String {
    let one_line = |t: &str| t.replace(['\n', '\r'], " ");
    match s.char_indices().nth(max) {
        None => one_line(s),
        Some((end, _)) => format!(
            "{}... ({} more characters)",
            one_line(&s[..end]),
            s[end..].chars().count()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_input_is_cut_on_a_character_boundary() {
        assert_eq!(clip("conv1"), "conv1");
        assert_eq!(clip("a\nb"), "a b");
        let long = "é".repeat(100);
        let c = clip(&long);
        assert_eq!(c, format!("{}... (20 more characters)", "é".repeat(80)));
        assert_eq!(clip_to("abcdef", 3), "abc... (3 more characters)");
    }
}
