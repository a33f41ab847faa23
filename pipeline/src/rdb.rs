//! The members of a Redis set of integers, read from its `DUMP` payload.
//!
//! Why: a lookup in contentseen reads four band sets of ~15 (at 1M
//! fingerprints) to ~150 (at 10M) integers each. `SMEMBERS` sends every
//! member as its own bulk string, and the client's RESP parser spends about
//! 2,500 instructions and an allocation on each (measured under valgrind:
//! 150,000 of the 212,000 instructions per document). `DUMP` sends the
//! same set as one bulk string, the intset's own bytes, which decode here
//! in a few instructions per member. Redis's work is about the same (one
//! serialization, a CRC-64, an LZF attempt on the blob).
//!
//! The payload is Redis's RDB serialization of the value, followed by the
//! RDB version (2 bytes) and a CRC-64 (8 bytes). Read here: an intset
//! (type 11: one string holding the intset) and a hash-table set (type 2:
//! a count, then each member as a string, which must be an integer). Each
//! string may be plain, LZF-compressed or integer-encoded. Anything else (a
//! listpack set of Redis 7.2+, a newer format, a malformed payload) gives
//! `None`, and the caller reads the set with `SMEMBERS` instead: this is
//! a fast path, never the only one.

/// RDB object types read here.
const RDB_TYPE_SET: u8 = 2;
const RDB_TYPE_SET_INTSET: u8 = 11;

/// The RDB version (2 bytes) and CRC-64 (8 bytes) after the object.
const TRAILER: usize = 10;

/// A set's members from its `DUMP` payload, or `None` when the payload is
/// not a set of integers in a format read here.
pub fn set_members(payload: &[u8]) -> Option<Vec<i64>> {
    let object = payload.get(..payload.len().checked_sub(TRAILER)?)?;
    let (&kind, rest) = object.split_first()?;
    let mut r = Reader { buf: rest, at: 0 };
    let members = match kind {
        RDB_TYPE_SET_INTSET => intset(&r.string()?)?,
        RDB_TYPE_SET => {
            let n = r.length()?;
            // Each member takes at least one byte: a bound before allocating.
            if n > r.buf.len() as u64 {
                return None;
            }
            let mut out = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let s = r.string()?;
                out.push(std::str::from_utf8(&s).ok()?.parse().ok()?);
            }
            out
        }
        _ => return None,
    };
    // The whole object must have been read: no trailing bytes.
    (r.at == r.buf.len()).then_some(members)
}

/// An intset blob: encoding (2, 4 or 8 bytes per member), count, then the
/// members, all little-endian.
fn intset(blob: &[u8]) -> Option<Vec<i64>> {
    let width = u32::from_le_bytes(blob.get(0..4)?.try_into().ok()?) as usize;
    let count = u32::from_le_bytes(blob.get(4..8)?.try_into().ok()?) as usize;
    let body = blob.get(8..)?;
    if !matches!(width, 2 | 4 | 8) || body.len() != count.checked_mul(width)? {
        return None;
    }
    Some(
        body.chunks_exact(width)
            .map(|m| match *m {
                [a, b] => i16::from_le_bytes([a, b]) as i64,
                [a, b, c, d] => i32::from_le_bytes([a, b, c, d]) as i64,
                [a, b, c, d, e, f, g, h] => i64::from_le_bytes([a, b, c, d, e, f, g, h]),
                _ => 0, // unreachable: chunks of `width`
            })
            .collect(),
    )
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

/// A length, or an encoded string's kind.
enum Len {
    Plain(u64),
    /// Integer-encoded string of 1, 2 or 4 bytes.
    Int(usize),
    Lzf,
}

impl Reader<'_> {
    fn bytes(&mut self, n: usize) -> Option<&[u8]> {
        let out = self.buf.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn byte(&mut self) -> Option<u8> {
        self.bytes(1).map(|b| b[0])
    }

    fn len_or_encoding(&mut self) -> Option<Len> {
        let first = self.byte()?;
        Some(match first >> 6 {
            0 => Len::Plain((first & 0x3F) as u64),
            1 => Len::Plain(((first & 0x3F) as u64) << 8 | self.byte()? as u64),
            2 => match first {
                0x80 => Len::Plain(u32::from_be_bytes(self.bytes(4)?.try_into().ok()?) as u64),
                0x81 => Len::Plain(u64::from_be_bytes(self.bytes(8)?.try_into().ok()?)),
                _ => return None,
            },
            _ => match first & 0x3F {
                0 => Len::Int(1),
                1 => Len::Int(2),
                2 => Len::Int(4),
                3 => Len::Lzf,
                _ => return None,
            },
        })
    }

    fn length(&mut self) -> Option<u64> {
        match self.len_or_encoding()? {
            Len::Plain(n) => Some(n),
            _ => None,
        }
    }

    /// A string: plain, integer-encoded (as its decimal text) or LZF.
    fn string(&mut self) -> Option<Vec<u8>> {
        match self.len_or_encoding()? {
            Len::Plain(n) => Some(self.bytes(usize::try_from(n).ok()?)?.to_vec()),
            Len::Int(width) => {
                let b = self.bytes(width)?;
                let v = match *b {
                    [a] => a as i8 as i64,
                    [a, c] => i16::from_le_bytes([a, c]) as i64,
                    [a, c, d, e] => i32::from_le_bytes([a, c, d, e]) as i64,
                    _ => return None,
                };
                Some(v.to_string().into_bytes())
            }
            Len::Lzf => {
                let compressed = usize::try_from(self.length()?).ok()?;
                let len = usize::try_from(self.length()?).ok()?;
                lzf_decompress(self.bytes(compressed)?, len)
            }
        }
    }
}

/// An LZF-compressed string (liblzf's format, which Redis uses for RDB
/// strings), decoded by the `lzf` crate. `None` unless the input decodes to
/// exactly `len` bytes.
pub fn lzf_decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
    // Three input bytes give at most 264 output bytes: a longer claimed
    // length is malformed, and must not allocate (the crate allocates the
    // claimed length before it decodes).
    if input.is_empty() || len > input.len().saturating_mul(88) {
        return None;
    }
    lzf::decompress(input, len)
        .ok()
        .filter(|out| out.len() == len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_trailer(mut object: Vec<u8>) -> Vec<u8> {
        object.extend_from_slice(&[10, 0]); // RDB version
        object.extend_from_slice(&[0; 8]); // CRC, not checked
        object
    }

    fn intset_blob(width: u32, members: &[i64]) -> Vec<u8> {
        let mut b = width.to_le_bytes().to_vec();
        b.extend_from_slice(&(members.len() as u32).to_le_bytes());
        for &m in members {
            b.extend_from_slice(&m.to_le_bytes()[..width as usize]);
        }
        b
    }

    #[test]
    fn intsets_of_every_width() {
        for (width, members) in [
            (2u32, vec![-3i64, 7, 300]),
            (4, vec![-70_000, 1, 2_000_000_000]),
            (8, vec![i64::MIN, -1, 0, i64::MAX]),
        ] {
            let blob = intset_blob(width, &members);
            let mut object = vec![RDB_TYPE_SET_INTSET, blob.len() as u8];
            object.extend_from_slice(&blob);
            assert_eq!(set_members(&with_trailer(object)), Some(members));
        }
    }

    #[test]
    fn hash_table_sets_with_plain_and_integer_encoded_members() {
        // Count 3: "-1234567890123" (plain), 5 (int8), -300 (int16).
        let mut object = vec![RDB_TYPE_SET, 3, 14];
        object.extend_from_slice(b"-1234567890123");
        object.extend_from_slice(&[0xC0, 5, 0xC1]);
        object.extend_from_slice(&(-300i16).to_le_bytes());
        assert_eq!(
            set_members(&with_trailer(object)),
            Some(vec![-1_234_567_890_123, 5, -300])
        );
    }

    #[test]
    fn lzf_literals_and_overlapping_back_references() {
        // "abcabcabcabc": 3 literals, then a back reference of 9 bytes at
        // distance 3 (overlapping its own output).
        let input = [2, b'a', b'b', b'c', (7 << 5), 0, 2];
        assert_eq!(
            lzf_decompress(&input, 12).as_deref(),
            Some(&b"abcabcabcabc"[..])
        );
        // Wrong length, reference before the start, truncated input.
        assert_eq!(lzf_decompress(&input, 11), None);
        assert_eq!(lzf_decompress(&[(1 << 5), 5], 3), None);
        assert_eq!(lzf_decompress(&[5, b'a'], 6), None);
    }

    #[test]
    fn other_payloads_are_refused_not_misread() {
        assert_eq!(set_members(&[]), None);
        assert_eq!(
            set_members(&with_trailer(vec![0, 3, b'a', b'b', b'c'])),
            None
        ); // a string
        assert_eq!(set_members(&with_trailer(vec![20, 0])), None); // listpack set
        let blob = intset_blob(8, &[1, 2]);
        let mut object = vec![RDB_TYPE_SET_INTSET, blob.len() as u8 + 1];
        object.extend_from_slice(&blob);
        assert_eq!(set_members(&with_trailer(object)), None); // length past the blob
        let mut bad_width = intset_blob(8, &[1]);
        bad_width[0] = 3;
        let mut object = vec![RDB_TYPE_SET_INTSET, bad_width.len() as u8];
        object.extend_from_slice(&bad_width);
        assert_eq!(set_members(&with_trailer(object)), None);
    }
}
