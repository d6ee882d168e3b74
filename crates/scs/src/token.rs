//! SCS tokens (scs §B.1): up to 12 characters of `\0 0-9 a-z _` packed base 38 into a u64,
//! first character least significant.

use std::fmt;

/// The alphabet, index = digit value.
const ALPHABET: &[u8; 38] = b"\x000123456789abcdefghijklmnopqrstuvwxyz_";

/// 38^12: the first u64 that no 12-character token reaches.
pub const TOKEN_LIMIT: u64 = 9_065_737_908_494_995_456;

/// A token as stored (the raw u64 is kept so any value read round-trips).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Token(pub u64);

impl Token {
    /// Encode `s`; `None` when it is longer than 12 characters or has a character outside
    /// the alphabet (upper case is not folded: the game's tokens are lower case).
    pub fn new(s: &str) -> Option<Token> {
        if s.len() > 12 {
            return None;
        }
        let mut v: u64 = 0;
        for &c in s.as_bytes().iter().rev() {
            let d = ALPHABET.iter().position(|&a| a == c && c != 0)? as u64;
            v = v * 38 + d;
        }
        Some(Token(v))
    }

    /// True when the value decodes to a string of the alphabet without a `\0` inside it
    /// (a zero digit below a non-zero one would be an embedded NUL).
    pub fn is_valid(self) -> bool {
        if self.0 >= TOKEN_LIMIT {
            return false;
        }
        let mut v = self.0;
        while v != 0 {
            if v.is_multiple_of(38) {
                return false;
            }
            v /= 38;
        }
        true
    }

    /// The decoded string, or `None` for an invalid value.
    pub fn decode(self) -> Option<String> {
        if !self.is_valid() {
            return None;
        }
        let mut s = String::new();
        let mut v = self.0;
        while v != 0 {
            s.push(ALPHABET[(v % 38) as usize] as char);
            v /= 38;
        }
        Some(s)
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.decode() {
            Some(s) => write!(f, "{s}"),
            None => write!(f, "0x{:016x}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        // scs §B.1: "0" = 1, euro2 = 0x750461, profile0 = 0x2592011676, inv = 0xB823.
        assert_eq!(Token::new("0"), Some(Token(1)));
        assert_eq!(Token::new("euro2"), Some(Token(0x750461)));
        assert_eq!(Token::new("profile0"), Some(Token(0x25_9201_1676)));
        assert_eq!(Token(0xB823).decode().as_deref(), Some("inv"));
        assert_eq!(Token::new(""), Some(Token(0)));
        assert_eq!(Token::new("Euro2"), None);
        assert_eq!(Token::new("abcdefghijklm"), None);
        assert!(Token::new("____________").unwrap().is_valid());
        assert!(!Token(TOKEN_LIMIT).is_valid());
        // "a\0b" = digits 11, 0, 12.
        assert!(!Token(11 + 38 * 38 * 12).is_valid());
    }
}
