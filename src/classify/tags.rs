//! Rewriting the ECO, Opening and Variation tags of one PGN game, byte for byte
//! otherwise: other tags keep their order and text, the movetext is copied untouched.

/// The tags `okb classify` owns.
const OWNED: [&[u8]; 3] = [b"ECO", b"Opening", b"Variation"];

/// The name of a tag line (`[Name "value"]`), if it is one.
fn tag_name(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(b"[")?;
    let end = rest.iter().position(|b| b.is_ascii_whitespace() || *b == b'"').unwrap_or(rest.len());
    Some(&rest[..end])
}

fn push_tag(out: &mut Vec<u8>, name: &[u8], value: &str, newline: &[u8]) {
    out.push(b'[');
    out.extend_from_slice(name);
    out.extend_from_slice(b" \"");
    for b in value.bytes() {
        if b == b'"' || b == b'\\' {
            out.push(b'\\');
        }
        out.push(b);
    }
    out.extend_from_slice(b"\"]");
    out.extend_from_slice(newline);
}

/// Appends `game` (one game's text, starting at its first tag line) to `out` with the
/// tags ECO, Opening and Variation set to `values` (in that order; `None` removes the
/// tag). Existing tags are replaced where they stand; missing ones follow the last tag.
pub fn rewrite(game: &[u8], values: [Option<&str>; 3], out: &mut Vec<u8>) {
    let newline: &[u8] = match game.iter().position(|&b| b == b'\n') {
        Some(i) if i > 0 && game[i - 1] == b'\r' => b"\r\n",
        _ => b"\n",
    };
    let mut written = [false; 3];
    let mut at = 0;
    while at < game.len() && game[at] == b'[' {
        let end = game[at..].iter().position(|&b| b == b'\n').map_or(game.len(), |i| at + i + 1);
        let line = &game[at..end];
        match tag_name(line).and_then(|name| OWNED.iter().position(|owned| *owned == name)) {
            Some(i) => {
                if let (Some(value), false) = (values[i], written[i]) {
                    push_tag(out, OWNED[i], value, newline);
                }
                written[i] = true;
            }
            None => out.extend_from_slice(line),
        }
        at = end;
    }
    let had_tags = at > 0;
    for i in 0..3 {
        if let (Some(value), false) = (values[i], written[i]) {
            push_tag(out, OWNED[i], value, newline);
        }
    }
    if !had_tags {
        // A game without tags gets a tag section of its own, ended by a blank line.
        out.extend_from_slice(newline);
    }
    out.extend_from_slice(&game[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(game: &str, values: [Option<&str>; 3]) -> String {
        let mut out = Vec::new();
        rewrite(game.as_bytes(), values, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn existing_tags_are_replaced_in_place_and_missing_ones_added() {
        let game =
            "[Event \"x\"]\n[ECO \"A00\"]\n[White \"a\"]\n[Variation \"old\"]\n\n1. e4 c5 1-0\n\n";
        let got = run(game, [Some("B20"), Some("Sicilian Defense"), None]);
        assert_eq!(
            got,
            "[Event \"x\"]\n[ECO \"B20\"]\n[White \"a\"]\n[Opening \"Sicilian Defense\"]\n\n1. e4 c5 1-0\n\n"
        );
    }

    #[test]
    fn crlf_quotes_and_tagless_games() {
        let got = run(
            "[Event \"x\"]\r\n\r\n1. d4 *\r\n",
            [Some("D00"), Some("Queen's \"Pawn\""), Some("a\\b")],
        );
        assert_eq!(
            got,
            "[Event \"x\"]\r\n[ECO \"D00\"]\r\n[Opening \"Queen's \\\"Pawn\\\"\"]\r\n[Variation \"a\\\\b\"]\r\n\r\n1. d4 *\r\n"
        );
        assert_eq!(run("1. e4 *\n", [Some("B00"), None, None]), "[ECO \"B00\"]\n\n1. e4 *\n");
    }
}
