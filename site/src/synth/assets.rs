//! The bodies of the site's non-HTML resources: the stylesheets
//! `/static/{j}.css` and the images `/img/{j}.png`, each a valid 1x1 PNG
//! whose text chunk holds the bait link [`PNG_BAIT`].
//!
//! What this is not: a PNG encoder (one grey pixel in a stored deflate
//! block), or anything a crawler should find links in.

use super::PNG_BAIT;

pub(super) fn css_body(j: usize) -> Vec<u8> {
    format!(
        "/* synthetic stylesheet {j} */\n\
         body {{ font-family: Georgia, serif; margin: 0 auto; max-width: 42em; color: #2{d}2; }}\n\
         .site-nav a {{ margin-right: 1em; }}\n\
         .toc li {{ list-style: square; }}\n\
         aside.related {{ border-left: 3px solid #{d}{d}{d}; padding-left: 1em; }}\n\
         footer {{ font-size: small; border-top: 1px solid #ccc; }}\n",
        d = j % 10
    )
    .into_bytes()
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                0xedb8_8320 ^ (crc >> 1)
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A valid 1x1 grey PNG whose `tEXt` chunk holds [`PNG_BAIT`].
pub(super) fn png_body(j: usize) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    png_chunk(&mut out, b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
    let text = format!("Comment\0figure {j}: {PNG_BAIT}bait</a>");
    png_chunk(&mut out, b"tEXt", text.as_bytes());
    // zlib stream with one stored deflate block: filter byte 0, one grey pixel.
    let raw = [0u8, (j * 37 % 256) as u8];
    let (mut a, mut b) = (1u32, 0u32);
    for &x in &raw {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    let mut zlib = vec![0x78, 0x01, 0x01, 0x02, 0x00, 0xfd, 0xff, raw[0], raw[1]];
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    png_chunk(&mut out, b"IDAT", &zlib);
    png_chunk(&mut out, b"IEND", &[]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::tests::body_of;
    use crate::synth::{SiteSpec, SynthSite};

    #[test]
    fn png_holds_bait_and_is_a_png() {
        let site = SynthSite::new(SiteSpec::default());
        let (_, _, body) = body_of(&site.respond("/img/3.png"));
        assert!(body.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert!(body
            .windows(PNG_BAIT.len())
            .any(|w| w == PNG_BAIT.as_bytes()));
        assert!(body.ends_with(&[0xae, 0x42, 0x60, 0x82]), "IEND crc");
    }
}
