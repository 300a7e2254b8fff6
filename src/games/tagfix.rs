//! Tag lines whose value holds unescaped quotes, repaired the way python-chess reads them.
//!
//! Real exports contain `[Event "Vote Chess "Team A" vs B"]` and `[White ""Learning with
//! fun""]`. pgn-reader ends the value at the first inner quote and reads the rest of the
//! line as movetext, which splits one game into several (a phantom game and the real one
//! without its tags). python-chess takes the value up to the last quote before `]`; so do
//! we, by escaping the inner quotes (`\"`) before the reader sees the text. Only newlines
//! matter for locations, and none are added, so `file:line` stays right.

use memchr::memchr;

/// Escapes the unescaped inner quotes of every tag line of `data` that has them, in place.
/// Returns the 1-based line numbers of the repaired lines (`first_line` being the line of
/// `data`'s first byte). A text without such lines is left untouched and costs one scan.
pub fn repair(data: &mut Vec<u8>, first_line: u64) -> Vec<u64> {
    let broken = broken_lines(data);
    if broken.is_empty() {
        return Vec::new();
    }
    let mut lines = Vec::with_capacity(broken.len());
    let mut out = Vec::with_capacity(data.len() + 16 * broken.len());
    let (mut copied, mut line, mut counted) = (0, first_line, 0);
    for (start, quotes) in &broken {
        line += count_newlines(&data[counted..*start]);
        counted = *start;
        lines.push(line);
        for &q in quotes {
            out.extend_from_slice(&data[copied..q]);
            out.push(b'\\');
            copied = q;
        }
    }
    out.extend_from_slice(&data[copied..]);
    *data = out;
    lines
}

/// Start of every tag line that needs a repair, with the offsets of its inner quotes.
fn broken_lines(data: &[u8]) -> Vec<(usize, Vec<usize>)> {
    let mut found = Vec::new();
    let starts = std::iter::once(0).chain(memchr::memmem::find_iter(data, b"\n[").map(|i| i + 1));
    for start in starts {
        if data.get(start) != Some(&b'[') {
            continue;
        }
        let end = memchr(b'\n', &data[start..]).map_or(data.len(), |e| start + e);
        // An inner quote makes three quotes on the line at least; nearly every tag line
        // has two, and this count is cheaper than reading the line as a tag.
        if data[start..end].iter().filter(|&&b| b == b'"').count() < 3 {
            continue;
        }
        if let Some(quotes) = inner_quotes(&data[start..end]) {
            found.push((start, quotes.into_iter().map(|q| start + q).collect()));
        }
    }
    found
}

/// The offsets of the unescaped quotes inside the value of a tag line
/// (`[Name "value"]`, the value running to the last quote before `]`), if there are any.
fn inner_quotes(line: &[u8]) -> Option<Vec<usize>> {
    let line = line.trim_ascii_end();
    let body = line.strip_prefix(b"[")?.strip_suffix(b"\"]")?;
    let open = memchr(b'"', body)?;
    let name = body[..open].trim_ascii_end();
    let valid_name = name.first().is_some_and(u8::is_ascii_alphanumeric)
        && name.iter().all(|b| b.is_ascii_alphanumeric() || b"_+#=:-".contains(b))
        && open > name.len();
    if !valid_name {
        return None;
    }
    let mut quotes = Vec::new();
    let mut i = open + 1;
    while i < body.len() {
        match body[i] {
            b'\\' => i += 1,
            b'"' => quotes.push(i + 1),
            _ => {}
        }
        i += 1;
    }
    // A value ending in a backslash escapes its closing quote for pgn-reader: leave it.
    (!quotes.is_empty() && i == body.len()).then_some(quotes)
}

/// Number of `\n` bytes in `data` (lines are counted on `\n`, so CRLF files work).
///
/// The thread that decompresses counts every chunk's lines before the next chunk can be
/// numbered, so this runs on gigabytes: 16 bytes per SSE2 compare (part of every x86-64
/// processor), where a plain `filter().count()` manages about one byte a cycle.
pub fn count_newlines(data: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        sse2_count_newlines(data)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        data.iter().filter(|&&b| b == b'\n').count() as u64
    }
}

#[cfg(target_arch = "x86_64")]
fn sse2_count_newlines(data: &[u8]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_sad_epu8, _mm_set1_epi8,
    };
    use std::arch::x86_64::{_mm_setzero_si128, _mm_srli_si128, _mm_sub_epi8};
    const BLOCK: usize = 16;
    let mut total = 0u64;
    // Up to 255 blocks per round, so that no byte lane of the sum overflows.
    let mut rounds = data.chunks_exact(BLOCK * 255);
    for round in &mut rounds {
        // SAFETY: SSE2 is part of x86-64; every load reads 16 bytes inside `round`.
        unsafe {
            let newline = _mm_set1_epi8(b'\n' as i8);
            let mut sums = _mm_setzero_si128();
            for block in round.chunks_exact(BLOCK) {
                let bytes = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
                // A match is -1 in its lane: subtracting it adds one.
                sums = _mm_sub_epi8(sums, _mm_cmpeq_epi8(bytes, newline));
            }
            let halves = _mm_sad_epu8(sums, _mm_setzero_si128());
            total +=
                (_mm_cvtsi128_si64(halves) + _mm_cvtsi128_si64(_mm_srli_si128::<8>(halves))) as u64;
        }
    }
    total + rounds.remainder().iter().filter(|&&b| b == b'\n').count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(text: &str) -> (String, Vec<u64>) {
        let mut data = text.as_bytes().to_vec();
        let lines = repair(&mut data, 10);
        (String::from_utf8(data).unwrap(), lines)
    }

    #[test]
    fn inner_quotes_are_escaped_and_their_lines_named() {
        let (text, lines) = fixed(
            "[Event \"Vote Chess \"Team A\" vs B\"]\r\n[White \"\"Fun\"\"]\n[Site \"x\"]\n\n1. e4 *\n",
        );
        assert_eq!(
            text,
            "[Event \"Vote Chess \\\"Team A\\\" vs B\"]\r\n[White \"\\\"Fun\\\"\"]\n[Site \"x\"]\n\n1. e4 *\n"
        );
        assert_eq!(lines, vec![10, 11]);
    }

    #[test]
    fn sound_lines_and_movetext_are_untouched() {
        for text in [
            "[Event \"a \\\"b\\\" c\"]\n1. e4 *\n",
            "[Event \"\"]\n",
            "1. e4 { [%eval \"x\" y] } *\n",
            "[Event \"a\\\"]\n",
        ] {
            assert_eq!(fixed(text), (text.to_string(), vec![]), "{text}");
        }
    }
}
