//! The bytes of a TIFF file's structure: the header and image file directories (IFDs), in the
//! host's byte order (what the `tiff` crate's encoder declares too), classic or BigTIFF.
//!
//! Two placements of an IFD's out-of-line values (the values longer than an entry's 4 (classic)
//! or 8 (BigTIFF) bytes):
//! * [`Ifd::encode_values_first`]: the values in the order the tags were added, unpadded, then
//!   the directory. This is byte for byte what `tiff::encoder::DirectoryEncoder` writes (the
//!   striped GeoTIFF of earlier versions, whose bytes stay the same; a test holds it).
//! * [`Ifd::encode_dir_first`]: the directory, then its values on word boundaries, so the
//!   directories of all levels of a Cloud-Optimized GeoTIFF can sit at the start of the file.

/// A tag's values.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Short(Vec<u16>),
    Long(Vec<u32>),
    Long8(Vec<u64>),
    Double(Vec<f64>),
    /// Written NUL-terminated; printable ASCII expected.
    Ascii(String),
}

impl Value {
    /// TIFF field type code.
    fn type_code(&self) -> u16 {
        match self {
            Value::Short(_) => 3,
            Value::Long(_) => 4,
            Value::Long8(_) => 16,
            Value::Double(_) => 12,
            Value::Ascii(_) => 2,
        }
    }

    fn count(&self) -> u64 {
        (match self {
            Value::Short(v) => v.len(),
            Value::Long(v) => v.len(),
            Value::Long8(v) => v.len(),
            Value::Double(v) => v.len(),
            Value::Ascii(s) => s.len() + 1,
        }) as u64
    }

    fn byte_len(&self) -> u64 {
        let unit = match self {
            Value::Short(_) => 2,
            Value::Long(_) => 4,
            Value::Long8(_) | Value::Double(_) => 8,
            Value::Ascii(_) => 1,
        };
        self.count() * unit
    }

    fn bytes(&self) -> Vec<u8> {
        match self {
            Value::Short(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
            Value::Long(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
            Value::Long8(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
            Value::Double(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
            Value::Ascii(s) => s.bytes().chain([0]).collect(),
        }
    }

    /// File offsets (strip or tile offsets and byte counts): LONG in classic TIFF, LONG8 in
    /// BigTIFF; an error when a classic file passes 4 GiB.
    pub fn offsets(v: &[u64], big: bool) -> std::io::Result<Value> {
        if big {
            return Ok(Value::Long8(v.to_vec()));
        }
        v.iter()
            .map(|&x| u32::try_from(x).map_err(|_| std::io::Error::other("file passed 4 GiB; classic TIFF cannot address it (use BigTIFF)")))
            .collect::<std::io::Result<Vec<u32>>>()
            .map(Value::Long)
    }
}

/// The file header: byte order mark, version, and the offset of the first IFD.
pub(crate) fn header(big: bool, first_ifd: u64) -> Vec<u8> {
    let mark = if cfg!(target_endian = "little") { b'I' } else { b'M' };
    let mut h = vec![mark, mark];
    if big {
        h.extend(43u16.to_ne_bytes());
        h.extend(8u16.to_ne_bytes());
        h.extend(0u16.to_ne_bytes());
        h.extend(first_ifd.to_ne_bytes());
    } else {
        h.extend(42u16.to_ne_bytes());
        h.extend((first_ifd as u32).to_ne_bytes());
    }
    h
}

/// Length of the header.
pub(crate) fn header_len(big: bool) -> u64 {
    if big {
        16
    } else {
        8
    }
}

/// Position of the first-IFD offset field in the header.
pub(crate) fn header_ifd_field(big: bool) -> u64 {
    if big {
        8
    } else {
        4
    }
}

/// One image file directory: tags in the order they were added.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ifd {
    entries: Vec<(u16, Value)>,
}

impl Ifd {
    pub fn push(&mut self, tag: u16, value: Value) {
        self.entries.push((tag, value));
    }

    /// The value of `tag`.
    pub fn get(&self, tag: u16) -> Option<&Value> {
        self.entries.iter().find(|e| e.0 == tag).map(|e| &e.1)
    }

    /// Replaces the value of `tag` (one of the same length keeps the layout).
    pub fn set(&mut self, tag: u16, value: Value) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.0 == tag) {
            e.1 = value;
        } else {
            self.push(tag, value);
        }
    }

    fn inline(big: bool) -> u64 {
        if big {
            8
        } else {
            4
        }
    }

    /// Bytes of the directory itself: entry count, entries, next-IFD offset.
    fn dir_len(&self, big: bool) -> u64 {
        let n = self.entries.len() as u64;
        if big {
            8 + 20 * n + 8
        } else {
            2 + 12 * n + 4
        }
    }

    /// Bytes of [`Ifd::encode_dir_first`].
    pub fn dir_first_len(&self, big: bool) -> u64 {
        let values: u64 = self.entries.iter().map(|(_, v)| v.byte_len()).filter(|&l| l > Self::inline(big)).map(|l| l + l % 2).sum();
        self.dir_len(big) + values
    }

    /// The directory's entries (sorted by tag) with the given value positions.
    fn directory(&self, big: bool, positions: &[Option<u64>], next: u64) -> Vec<u8> {
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by_key(|&i| self.entries[i].0);
        let mut d = Vec::with_capacity(self.dir_len(big) as usize);
        if big {
            d.extend((self.entries.len() as u64).to_ne_bytes());
        } else {
            d.extend((self.entries.len() as u16).to_ne_bytes());
        }
        for i in order {
            let (tag, v) = &self.entries[i];
            d.extend(tag.to_ne_bytes());
            d.extend(v.type_code().to_ne_bytes());
            let mut field = [0u8; 8];
            match positions[i] {
                Some(p) if big => field = p.to_ne_bytes(),
                Some(p) => field[..4].copy_from_slice(&(p as u32).to_ne_bytes()),
                None => {
                    let b = v.bytes();
                    field[..b.len()].copy_from_slice(&b);
                }
            }
            if big {
                d.extend(v.count().to_ne_bytes());
                d.extend(field);
            } else {
                d.extend((v.count() as u32).to_ne_bytes());
                d.extend(&field[..4]);
            }
        }
        if big {
            d.extend(next.to_ne_bytes());
        } else {
            d.extend((next as u32).to_ne_bytes());
        }
        d
    }

    /// The out-of-line values (in the order added, unpadded) written at `at`, then the
    /// directory (next IFD: none). Returns the bytes and the directory's offset.
    pub fn encode_values_first(&self, at: u64, big: bool) -> (Vec<u8>, u64) {
        let mut out = Vec::new();
        let mut positions = Vec::with_capacity(self.entries.len());
        for (_, v) in &self.entries {
            if v.byte_len() > Self::inline(big) {
                positions.push(Some(at + out.len() as u64));
                out.extend(v.bytes());
            } else {
                positions.push(None);
            }
        }
        let dir_at = at + out.len() as u64;
        out.extend(self.directory(big, &positions, 0));
        (out, dir_at)
    }

    /// The directory at `at` (which must be even), then its out-of-line values each on a word
    /// boundary; `next` is the offset of the following IFD (0: none).
    pub fn encode_dir_first(&self, at: u64, big: bool, next: u64) -> Vec<u8> {
        let mut pos = at + self.dir_len(big);
        let mut positions = Vec::with_capacity(self.entries.len());
        let mut values = Vec::new();
        for (_, v) in &self.entries {
            let l = v.byte_len();
            if l > Self::inline(big) {
                positions.push(Some(pos));
                values.extend(v.bytes());
                if l % 2 == 1 {
                    values.push(0);
                }
                pos += l + l % 2;
            } else {
                positions.push(None);
            }
        }
        let mut out = self.directory(big, &positions, next);
        out.extend(values);
        debug_assert_eq!(out.len() as u64, self.dir_first_len(big));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use tiff::encoder::{TiffEncoder, TiffKind, TiffKindBig, TiffKindStandard};
    use tiff::tags::Tag;

    /// The tags and layout of a small striped file, through the `tiff` crate's encoder and
    /// through [`Ifd::encode_values_first`]: the same bytes.
    fn both<K: TiffKind>(big: bool) -> (Vec<u8>, Vec<u8>) {
        let strips: [&[u8]; 3] = [b"abcde", b"fg", b"hijklmn"];
        let mut reference = Cursor::new(Vec::new());
        {
            let mut enc = TiffEncoder::<_, K>::new_generic(&mut reference).unwrap();
            let mut dir = enc.image_directory().unwrap();
            let mut offsets = Vec::new();
            for s in strips {
                offsets.push(dir.write_data(s).unwrap());
            }
            dir.write_tag(Tag::ImageWidth, 7u32).unwrap();
            dir.write_tag(Tag::BitsPerSample, 16u16).unwrap();
            if big {
                dir.write_tag(Tag::StripOffsets, &offsets[..]).unwrap();
            } else {
                dir.write_tag(Tag::StripOffsets, &offsets.iter().map(|&o| o as u32).collect::<Vec<_>>()[..]).unwrap();
            }
            dir.write_tag(Tag::Software, "trnbake").unwrap();
            dir.write_tag(Tag::ModelPixelScaleTag, &[2.0, 2.0, 0.0][..]).unwrap();
            dir.write_tag(Tag::GdalNodata, "nan").unwrap();
            dir.write_tag(Tag::Unknown(42112), "<GDALMetadata>x</GDALMetadata>").unwrap();
            dir.finish().unwrap();
        }
        let mut ours = header(big, 0);
        let mut offsets = Vec::new();
        for s in strips {
            offsets.push(ours.len() as u64);
            ours.extend(s);
        }
        let mut ifd = Ifd::default();
        ifd.push(256, Value::Long(vec![7]));
        ifd.push(258, Value::Short(vec![16]));
        ifd.push(273, Value::offsets(&offsets, big).unwrap());
        ifd.push(305, Value::Ascii("trnbake".into()));
        ifd.push(33550, Value::Double(vec![2.0, 2.0, 0.0]));
        ifd.push(42113, Value::Ascii("nan".into()));
        ifd.push(42112, Value::Ascii("<GDALMetadata>x</GDALMetadata>".into()));
        let (bytes, dir_at) = ifd.encode_values_first(ours.len() as u64, big);
        ours.extend(bytes);
        let h = header(big, dir_at);
        ours[..h.len()].copy_from_slice(&h);
        (reference.into_inner(), ours)
    }

    #[test]
    fn values_first_is_the_tiff_crates_layout() {
        let (a, b) = both::<TiffKindStandard>(false);
        assert_eq!(a, b);
        let (a, b) = both::<TiffKindBig>(true);
        assert_eq!(a, b);
    }

    #[test]
    fn dir_first_reads_back() {
        // A 2×1 uncompressed u16 image whose IFD precedes its values and data.
        for big in [false, true] {
            let mut ifd = Ifd::default();
            ifd.push(256, Value::Long(vec![2]));
            ifd.push(257, Value::Long(vec![1]));
            ifd.push(258, Value::Short(vec![16]));
            ifd.push(259, Value::Short(vec![1]));
            ifd.push(262, Value::Short(vec![1]));
            ifd.push(305, Value::Ascii("odd".into()));
            ifd.push(273, Value::offsets(&[0], big).unwrap());
            ifd.push(277, Value::Short(vec![1]));
            ifd.push(278, Value::Long(vec![1]));
            ifd.push(279, Value::offsets(&[4], big).unwrap());
            let at = header_len(big);
            let data_at = at + ifd.dir_first_len(big);
            ifd.set(273, Value::offsets(&[data_at], big).unwrap());
            let mut f = header(big, at);
            f.extend(ifd.encode_dir_first(at, big, 0));
            assert_eq!(f.len() as u64, data_at);
            f.extend([1u16, 65535].iter().flat_map(|v| v.to_ne_bytes()));
            let mut d = tiff::decoder::Decoder::new(Cursor::new(f)).unwrap();
            assert_eq!(d.dimensions().unwrap(), (2, 1));
            assert_eq!(d.get_tag_ascii_string(Tag::Software).unwrap(), "odd");
            match d.read_image().unwrap() {
                tiff::decoder::DecodingResult::U16(v) => assert_eq!(v, [1, 65535]),
                other => panic!("{other:?}"),
            }
        }
    }
}
