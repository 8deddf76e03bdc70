//! Quoting user input in messages: an error is one line, and a hostile input (a 15 KB
//! nested .npy header, a megabyte-long layer name) must not make it a page. An unknown
//! name gets the closest known one ([`did_you_mean`]).

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

/// `s` with every word (a run without spaces) longer than `max` characters cut to `max`
/// (see [`clip_to`]): the one error line of a command passes through it, so an input a
/// library quotes whole (serde's `floating point `1000...0``, a float printed in full
/// digits, a 100,000-character hash) is never a page, whichever message quoted it.
pub fn clip_words(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(4 * max + 64));
    for (i, word) in s.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match word.char_indices().nth(max) {
            None => out.push_str(word),
            Some(_) => out.push_str(&clip_to(word, max)),
        }
    }
    out
}

/// ` (did you mean "X"?)` for the known name `X` closest to the unknown `input`, or ""
/// when none is close. Close: at most one edit (insertion, deletion, substitution or
/// swap of neighbours, case ignored) per three characters of `input`, and at least one;
/// a tie goes to the first in `known`. Appended to the end of a one-line error.
pub fn did_you_mean<'a>(input: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let input_lower = input.to_lowercase();
    let budget = (input.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for k in known {
        let d = strsim::osa_distance(&input_lower, &k.to_lowercase());
        if d <= budget && k != input && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k));
        }
    }
    best.map_or_else(String::new, |(_, k)| {
        format!(" (did you mean \"{}\"?)", clip(k))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_closest_name_within_the_budget() {
        let zoo = ["lenet5", "vgg16", "resnet18", "resnet20"];
        assert_eq!(did_you_mean("lenet", zoo), " (did you mean \"lenet5\"?)");
        // A swap of neighbours is one edit.
        assert_eq!(did_you_mean("vgg61", zoo), " (did you mean \"vgg16\"?)");
        assert_eq!(did_you_mean("VGG16", zoo), " (did you mean \"vgg16\"?)");
        // resnet18 and resnet20 are both one edit from resnet28: the first wins.
        assert_eq!(
            did_you_mean("resnet28", zoo),
            " (did you mean \"resnet18\"?)"
        );
        assert_eq!(
            did_you_mean("resnet21", zoo),
            " (did you mean \"resnet20\"?)"
        );
        // Too far: nothing rather than a wild guess.
        assert_eq!(did_you_mean("alexnet", zoo), "");
        assert_eq!(
            did_you_mean("sree", ["dense", "sre"]),
            " (did you mean \"sre\"?)"
        );
        assert_eq!(did_you_mean("x", ["dense", "sre"]), "");
        assert_eq!(
            did_you_mean("ou.row", ["ou.rows", "ou.cols"]),
            " (did you mean \"ou.rows\"?)"
        );
        assert_eq!(did_you_mean("a", std::iter::empty()), "");
    }

    #[test]
    fn long_input_is_cut_on_a_character_boundary() {
        assert_eq!(clip("conv1"), "conv1");
        assert_eq!(clip("a\nb"), "a b");
        let long = "é".repeat(100);
        let c = clip(&long);
        assert_eq!(c, format!("{}... (20 more characters)", "é".repeat(80)));
        assert_eq!(clip_to("abcdef", 3), "abc... (3 more characters)");
    }

    #[test]
    fn every_long_word_of_a_message_is_cut() {
        let big = format!("`1{}`", "0".repeat(300));
        let msg =
            format!("--set digital.lanes=1e300: invalid type: floating point {big}, expected u32");
        let c = clip_words(&msg, MAX_QUOTED_CHARS);
        assert!(c.len() < 200, "{c}");
        assert!(c.starts_with("--set digital.lanes=1e300: invalid type: floating point `1000"));
        assert!(c.ends_with("... (224 more characters) expected u32"), "{c}");
        assert_eq!(clip_words("a b  c", 80), "a b  c");
    }
}
