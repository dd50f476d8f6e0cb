//! Replies of Redis, made into the store's types: network data, so every
//! unexpected shape is a [`StoreError::Reply`], never a panic (the
//! parent's lints deny what could panic).

use redis::Value;

use super::{Entry, StoreError, URLS};
use crate::cluster::Keys;

/// XREADGROUP's (and the sweep's) `[[stream, [entry, ...]], ...]` → entries.
pub(super) fn parse_read(keys: &Keys, reply: Value) -> Result<Vec<Entry>, StoreError> {
    let streams = match reply {
        Value::Nil => return Ok(Vec::new()),
        Value::Array(streams) => streams,
        _ => return Err(StoreError::Reply("XREADGROUP")),
    };
    let mut entries = Vec::new();
    for stream in streams {
        let Value::Array(pair) = stream else {
            return Err(StoreError::Reply("XREADGROUP"));
        };
        let mut pair = pair.into_iter();
        let (Some(name), Some(Value::Array(items))) = (pair.next(), pair.next()) else {
            return Err(StoreError::Reply("XREADGROUP"));
        };
        let partition = text(name)
            .and_then(|n| keys.partition_of_stream(&n))
            .ok_or(StoreError::Reply("XREADGROUP"))?;
        for item in items {
            if let Some(entry) = parse_entry(partition, item)? {
                entries.push(entry);
            }
        }
    }
    Ok(entries)
}

/// `[id, [field, value, ...]]` → an entry; None for a deleted one (nil).
pub(super) fn parse_entry(partition: u32, item: Value) -> Result<Option<Entry>, StoreError> {
    let Value::Array(parts) = item else {
        return Ok(None);
    };
    let mut parts = parts.into_iter();
    let Some(id) = parts.next().and_then(text) else {
        return Err(StoreError::Reply("stream entry"));
    };
    let fields = match parts.next() {
        Some(Value::Array(fields)) => fields,
        Some(Value::Nil) | None => return Ok(None),
        Some(_) => return Err(StoreError::Reply("stream entry")),
    };
    let mut urls = String::new();
    let mut fields = fields.into_iter();
    while let (Some(name), Some(value)) = (fields.next(), fields.next()) {
        if text(name).as_deref() == Some(URLS) {
            // Not UTF-8 (not written by a node): no URL, so the entry is
            // acknowledged as done rather than failing every read.
            urls.push_str(&text(value).unwrap_or_default());
        }
    }
    Ok(Some(Entry {
        partition,
        id,
        text: urls,
    }))
}

/// A reply's text, if it is one.
pub(super) fn text(value: Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes).ok(),
        Value::SimpleString(s) => Some(s),
        _ => None,
    }
}
