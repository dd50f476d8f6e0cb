//! A WACZ's manifest: `datapackage.json` (a Frictionless data package:
//! `profile` `data-package`, `wacz_version` 1.1.1, when and by what it was
//! made, and every other file of the package with its path, size and
//! SHA-256) and `datapackage-digest.json` (the SHA-256 of that manifest,
//! the spec's optional fixity of the whole package; no signature). Pure:
//! what was written goes in, JSON bytes come out.
//!
//! Not the hashing of the files as they are copied nor the ZIP
//! (`wacz/mod.rs`).

use std::time::SystemTime;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::pages::Page;
use ringcrawl_warc::timestamp::rfc3339_seconds;

/// The WACZ version written.
pub(crate) const WACZ_VERSION: &str = "1.1.1";

/// One file of the package, as `datapackage.json` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Resource {
    /// Its file name, lower-cased (a Frictionless resource name).
    pub name: String,
    /// Its path in the ZIP.
    pub path: String,
    /// `sha256:` and the hex digest of its bytes.
    pub hash: String,
    /// Its size.
    pub bytes: u64,
}

impl Resource {
    /// The entry for the file at `path` in the ZIP whose bytes hashed to
    /// `sha256`.
    pub(crate) fn new(path: &str, sha256: &[u8], bytes: u64) -> Self {
        let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
        Resource {
            name,
            path: path.to_string(),
            hash: sha256_text(sha256),
            bytes,
        }
    }
}

/// `sha256:` and `digest` in lower-case hex, as WACZ writes hashes.
pub(crate) fn sha256_text(digest: &[u8]) -> String {
    format!("sha256:{}", data_encoding::HEXLOWER.encode(digest))
}

/// What the manifest says besides its resources.
#[derive(Debug, Clone)]
pub(crate) struct About<'a> {
    /// One line naming the collection.
    pub title: &'a str,
    /// When the package was made.
    pub created: SystemTime,
    /// The page a replay opens first (the first root, if it is a page).
    pub main_page: Option<&'a Page>,
}

#[derive(Serialize)]
struct DataPackage<'a> {
    profile: &'static str,
    wacz_version: &'static str,
    title: &'a str,
    created: String,
    software: &'static str,
    #[serde(rename = "mainPageUrl", skip_serializing_if = "Option::is_none")]
    main_page_url: Option<&'a str>,
    #[serde(rename = "mainPageDate", skip_serializing_if = "Option::is_none")]
    main_page_date: Option<&'a str>,
    resources: &'a [Resource],
}

/// `datapackage.json`.
pub(crate) fn datapackage(about: &About, resources: &[Resource]) -> Vec<u8> {
    let package = DataPackage {
        profile: "data-package",
        wacz_version: WACZ_VERSION,
        title: about.title,
        created: rfc3339_seconds(about.created),
        software: concat!("ringcrawl ", env!("CARGO_PKG_VERSION")),
        main_page_url: about.main_page.map(|p| p.url.as_str()),
        main_page_date: about.main_page.map(|p| p.ts.as_str()),
        resources,
    };
    // Strings and numbers only: serializing cannot fail.
    let mut out = serde_json::to_vec_pretty(&package).unwrap_or_default();
    out.push(b'\n');
    out
}

/// `datapackage-digest.json` for the manifest `datapackage`.
pub(crate) fn digest(datapackage: &[u8]) -> Vec<u8> {
    let digest = serde_json::json!({
        "path": "datapackage.json",
        "hash": sha256_text(&Sha256::digest(datapackage)),
    });
    let mut out = serde_json::to_vec_pretty(&digest).unwrap_or_default();
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn a_resource_is_named_by_its_file_and_hashed_in_lower_case_hex() {
        let r = Resource::new("archive/Crawl-S0.warc.gz", &Sha256::digest(b"abc"), 3);
        assert_eq!(r.name, "crawl-s0.warc.gz");
        assert_eq!(r.path, "archive/Crawl-S0.warc.gz");
        assert_eq!(
            r.hash,
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(r.bytes, 3);
    }

    #[test]
    fn the_manifest_has_the_wacz_fields_and_every_resource() {
        let page = Page::new("http://a.test/", "2023-11-14T22:13:20Z".into());
        let resources = [
            Resource::new("archive/a.warc.gz", &[0xab; 32], 10),
            Resource::new("pages/pages.jsonl", &[0; 32], 70),
        ];
        let about = About {
            title: "ringcrawl crawl of http://a.test/",
            created: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            main_page: Some(&page),
        };
        let json: serde_json::Value =
            serde_json::from_slice(&datapackage(&about, &resources)).unwrap();
        assert_eq!(json["profile"], "data-package");
        assert_eq!(json["wacz_version"], "1.1.1");
        assert_eq!(json["created"], "2023-11-14T22:13:20Z");
        assert_eq!(
            json["software"],
            format!("ringcrawl {}", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(json["mainPageUrl"], "http://a.test/");
        assert_eq!(json["mainPageDate"], "2023-11-14T22:13:20Z");
        assert_eq!(json["resources"][0]["path"], "archive/a.warc.gz");
        assert_eq!(json["resources"][0]["name"], "a.warc.gz");
        assert_eq!(json["resources"][0]["bytes"], 10);
        assert_eq!(
            json["resources"][0]["hash"],
            format!("sha256:{}", "ab".repeat(32))
        );
        assert_eq!(json["resources"].as_array().unwrap().len(), 2);

        let without = About {
            main_page: None,
            ..about
        };
        let json: serde_json::Value =
            serde_json::from_slice(&datapackage(&without, &resources)).unwrap();
        assert!(json.get("mainPageUrl").is_none());
    }

    #[test]
    fn the_digest_file_names_the_manifest_and_its_sha256() {
        let json: serde_json::Value = serde_json::from_slice(&digest(b"abc")).unwrap();
        assert_eq!(json["path"], "datapackage.json");
        assert_eq!(
            json["hash"],
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
