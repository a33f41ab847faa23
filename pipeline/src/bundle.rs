//! Bundles: many queue messages in one broker message (pure).
//!
//! RabbitMQ's cost is per message far more than per byte (a persistent
//! publish, its confirm, the delivery and the ack), so the RabbitMQ
//! publisher ([`crate::broker`]) packs the messages it is asked to publish
//! to one queue within a short window into bundles, and the worker loop
//! ([`crate::worker`]) unpacks them: a bundle is acked when every message
//! in it is done, and redelivered whole otherwise (stages are idempotent).
//!
//! Layout: [`MARK`] (a byte MessagePack never uses, so no single message
//! starts with it), then per message its length (u32, little endian) and
//! its bytes. A payload that does not start with [`MARK`] is one message.

/// The first byte of a bundle: `0xC1` is "never used" in MessagePack.
pub const MARK: u8 = 0xC1;
/// At most this many messages per bundle.
pub const MAX_ITEMS: usize = 32;
/// A bundle is closed once it holds this many bytes (a single larger
/// message travels alone).
pub const MAX_BYTES: usize = 1 << 20;

/// A payload that says it is a bundle but is not a well-formed one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    #[error("bundle cut short at byte {0}")]
    Truncated(usize),
    #[error("bundle holds no message")]
    Empty,
    #[error("bundle holds more than {MAX_ITEMS} messages")]
    TooMany,
}

/// The messages in `payload`: one for a plain message, each of a bundle's.
pub fn unpack(payload: &[u8]) -> Result<Vec<&[u8]>, BundleError> {
    if payload.first() != Some(&MARK) {
        return Ok(vec![payload]);
    }
    let mut items = Vec::new();
    let mut at = 1;
    while at < payload.len() {
        let len = payload
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or(BundleError::Truncated(at))? as usize;
        at += 4;
        let item = payload
            .get(at..at.saturating_add(len))
            .ok_or(BundleError::Truncated(at))?;
        if items.len() == MAX_ITEMS {
            return Err(BundleError::TooMany);
        }
        items.push(item);
        at += len;
    }
    if items.is_empty() {
        return Err(BundleError::Empty);
    }
    Ok(items)
}

/// How many messages `payload` holds (1 for a plain message or a malformed
/// bundle, which is dealt with as one message).
pub fn count(payload: &[u8]) -> usize {
    unpack(payload).map_or(1, |items| items.len())
}

/// `messages` as broker payloads: bundles of up to [`MAX_ITEMS`] messages
/// and about [`MAX_BYTES`], in order; a message alone in its group is sent
/// as it is.
pub fn pack(messages: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut group: Vec<&[u8]> = Vec::new();
    let mut bytes = 0;
    let close = |group: &mut Vec<&[u8]>, out: &mut Vec<Vec<u8>>| match group.len() {
        0 => {}
        // Alone, unless it starts like a bundle (no message does; bytes
        // that do are wrapped, so that they arrive as they were sent).
        1 if group[0].first() != Some(&MARK) => out.push(group[0].to_vec()),
        _ => {
            let size = 1 + group.iter().map(|m| 4 + m.len()).sum::<usize>();
            let mut b = Vec::with_capacity(size);
            b.push(MARK);
            for m in group.iter() {
                b.extend_from_slice(&(m.len() as u32).to_le_bytes());
                b.extend_from_slice(m);
            }
            out.push(b);
            group.clear();
        }
    };
    for m in messages {
        // A message over u32::MAX bytes cannot be framed: alone, as it is.
        if group.len() == MAX_ITEMS || bytes >= MAX_BYTES || m.len() > u32::MAX as usize {
            close(&mut group, &mut out);
            group.clear();
            bytes = 0;
        }
        group.push(m);
        bytes += m.len();
    }
    close(&mut group, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_packed_unpacks_in_order() {
        let msgs: Vec<Vec<u8>> = (0..70u8)
            .map(|i| vec![0x80 | (i % 16); i as usize])
            .collect();
        let packed = pack(&msgs);
        assert_eq!(packed.len(), 3, "32 + 32 + 6");
        let back: Vec<Vec<u8>> = packed
            .iter()
            .flat_map(|p| unpack(p).unwrap().into_iter().map(<[u8]>::to_vec))
            .collect();
        assert_eq!(back, msgs);
        assert_eq!(count(&packed[0]), 32);
    }

    #[test]
    fn a_lone_message_travels_as_it_is() {
        let m = vec![0x81, 1, 2];
        assert_eq!(pack(std::slice::from_ref(&m)), vec![m.clone()]);
        assert_eq!(unpack(&m).unwrap(), vec![m.as_slice()]);
        assert_eq!(count(&m), 1);
        assert!(pack(&[]).is_empty());
        // An empty message is a message.
        let empty: &[u8] = &[];
        assert_eq!(unpack(empty).unwrap(), vec![empty]);
    }

    #[test]
    fn a_lone_message_that_starts_like_a_bundle_is_wrapped() {
        let odd = vec![MARK, 0, 0, 0, 0];
        let packed = pack(std::slice::from_ref(&odd));
        assert_eq!(packed.len(), 1);
        assert_eq!(unpack(&packed[0]).unwrap(), vec![odd.as_slice()]);
    }

    #[test]
    fn big_messages_close_a_bundle() {
        let big = vec![0x80; MAX_BYTES];
        let packed = pack(&[vec![0x80], big.clone(), vec![0x81]]);
        assert_eq!(packed.len(), 2);
        assert_eq!(unpack(&packed[0]).unwrap(), vec![&[0x80][..], &big[..]]);
        assert_eq!(packed[1], vec![0x81]);
    }

    #[test]
    fn malformed_bundles_are_refused() {
        assert_eq!(unpack(&[MARK]), Err(BundleError::Empty));
        assert_eq!(unpack(&[MARK, 5, 0]), Err(BundleError::Truncated(1)));
        assert_eq!(
            unpack(&[MARK, 5, 0, 0, 0, 1]),
            Err(BundleError::Truncated(5))
        );
        assert_eq!(
            unpack(&[MARK, 0xFF, 0xFF, 0xFF, 0xFF]),
            Err(BundleError::Truncated(5))
        );
        let mut many = vec![MARK];
        for _ in 0..=MAX_ITEMS {
            many.extend_from_slice(&0u32.to_le_bytes());
        }
        assert_eq!(unpack(&many), Err(BundleError::TooMany));
        assert_eq!(count(&[MARK]), 1);
    }
}
