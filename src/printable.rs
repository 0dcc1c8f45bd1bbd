//! One escaping for every string memlat prints: a host name, label, file
//! name or field read from another machine's file reaches a terminal
//! through here, never raw. Control characters (C0, DEL, C1: what a
//! terminal obeys, `ESC [2J` clears it, `ESC ]0;` sets its title) and the
//! invisible ones that reorder or hide text (bidirectional overrides,
//! zero-width marks) are written as `\u{1b}`; a string past its bound is
//! cut, saying how much was left out, so a 52 MB host name is one short
//! line of an error, not 52 MB of stderr.

use std::borrow::Cow;

/// Characters of one string in a table cell, a label or a quoted value.
pub const FIELD_CHARS: usize = 200;

/// Characters of one message (an error, a notice) at most.
pub const MESSAGE_CHARS: usize = 4000;

/// Whether a terminal would act on `c` or hide it rather than show it.
fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

fn escape<'a>(text: &'a str, max_chars: usize, keep: &[char]) -> Cow<'a, str> {
    let hidden = |c: char| unprintable(c) && !keep.contains(&c);
    let over = text.len() > max_chars && text.chars().nth(max_chars).is_some();
    if !over && !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    // At most `max_chars` characters written, escapes counted as written.
    let mut out = String::with_capacity(text.len().min(max_chars * 2));
    let mut shown = 0;
    for (at, c) in text.char_indices() {
        let escaped = hidden(c).then(|| c.escape_unicode());
        let width = escaped.clone().map_or(1, Iterator::count);
        if shown + width > max_chars {
            let left = text[at..].chars().count();
            out.push_str(&format!("... ({left} more characters)"));
            return Cow::Owned(out);
        }
        shown += width;
        match escaped {
            Some(e) => out.extend(e),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` on one line: every control character escaped (line breaks and
/// tabs too), cut to `max_chars`.
pub fn printable(text: &str, max_chars: usize) -> Cow<'_, str> {
    escape(text, max_chars, &[])
}

/// `text` as lines: control characters escaped but line breaks and tabs
/// kept, cut to `max_chars` (for a whole message or document).
pub fn printable_lines(text: &str, max_chars: usize) -> Cow<'_, str> {
    escape(text, max_chars, &['\n', '\t'])
}

/// `text` in double quotes, [`printable`] within [`FIELD_CHARS`] or `max_chars`.
pub fn quoted(text: &str, max_chars: usize) -> String {
    format!("\"{}\"", printable(text, max_chars.min(FIELD_CHARS)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_are_shown_not_obeyed_and_long_strings_cut() {
        let evil = "\u{1b}[2J\u{1b}]0;pwned\u{7}host\u{9b}\u{202e}x";
        let shown = printable(evil, 100);
        assert!(!shown.chars().any(unprintable), "{shown}");
        assert!(shown.contains("\\u{1b}[2J"), "{shown}");
        assert_eq!(printable("plain", 100), "plain");
        assert!(matches!(printable("plain", 100), Cow::Borrowed(_)));
        let long = "x".repeat(52_000_000);
        let cut = printable(&long, 10);
        assert_eq!(cut, "xxxxxxxxxx... (51999990 more characters)");
        assert_eq!(printable_lines("a\nb\tc\u{1b}", 100), "a\nb\tc\\u{1b}");
        assert_eq!(printable("a\nb", 100), "a\\u{a}b");
        assert_eq!(quoted("k\u{1b}", 100), "\"k\\u{1b}\"");
        // Escapes count as what they print.
        assert_eq!(
            printable("\u{1b}\u{1b}", 8),
            "\\u{1b}... (1 more characters)"
        );
        // Cut on characters, never inside one.
        assert_eq!(printable("ééé", 2), "éé... (1 more characters)");
    }
}
