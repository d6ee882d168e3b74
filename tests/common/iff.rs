//! IFF builders for hand-made test input: big-endian sizes, as the SWG client writes them.

/// A chunk: tag, size, data.
pub fn chunk(tag: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut v = tag.to_vec();
    v.extend_from_slice(&(data.len() as u32).to_be_bytes());
    v.extend_from_slice(data);
    v
}

/// A FORM of type `tag` around `body` (its children, already encoded).
pub fn form(tag: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut v = b"FORM".to_vec();
    v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    v.extend_from_slice(tag);
    v.extend_from_slice(body);
    v
}
