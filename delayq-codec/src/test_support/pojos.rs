//! The captured POJOs (`compat.Order`, `compat.Event`) as Rust types, and
//! their Java classes as a schema.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::kryo::{JavaUuid, KryoSchema};

/// The vectors' classes as Kryo needs them.
pub(crate) const SCHEMA: &str = r#"{"classes": {
    "compat.Order": {"fields": {"id": "String", "amount": "long", "tags": "List<String>"}},
    "compat.Event": {"fields": {"type": "String", "order": "compat.Order", "status": "compat.Event$Status",
        "uuid": "UUID", "createdAt": "long", "attrs": "Map<String,String>", "retries": "Integer",
        "ratio": "double", "urgent": "boolean"}},
    "compat.Event$Status": {"enum": ["NEW", "PAID", "CANCELLED"]}
}}"#;

/// The same classes with the `serialVersionUID` their Java classes declare
/// (1), which JDK serialization and River write.
pub(crate) const SCHEMA_WITH_UIDS: &str = r#"{"classes": {
    "compat.Order": {"serialVersionUID": 1, "fields": {"id": "String", "amount": "long", "tags": "List<String>"}},
    "compat.Event": {"serialVersionUID": 1, "fields": {"type": "String", "order": "compat.Order",
        "status": "compat.Event$Status", "uuid": "UUID", "createdAt": "long", "attrs": "Map<String,String>",
        "retries": "Integer", "ratio": "double", "urgent": "boolean"}},
    "compat.Event$Status": {"enum": ["NEW", "PAID", "CANCELLED"]}
}}"#;

pub(crate) fn schema() -> KryoSchema {
    KryoSchema::from_json(SCHEMA).unwrap()
}

pub(crate) fn schema_with_uids() -> KryoSchema {
    KryoSchema::from_json(SCHEMA_WITH_UIDS).unwrap()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "compat.Order")]
pub(crate) struct Order {
    pub(crate) id: Option<String>,
    pub(crate) amount: i64,
    pub(crate) tags: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "compat.Event$Status")]
pub(crate) enum Status {
    #[serde(rename = "NEW")]
    New,
    #[serde(rename = "PAID")]
    Paid,
    #[serde(rename = "CANCELLED")]
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "compat.Event", rename_all = "camelCase")]
pub(crate) struct Event {
    #[serde(rename = "type")]
    pub(crate) kind: Option<String>,
    pub(crate) order: Option<Order>,
    pub(crate) status: Option<Status>,
    pub(crate) uuid: Option<JavaUuid>,
    pub(crate) created_at: i64,
    pub(crate) attrs: Option<BTreeMap<String, String>>,
    pub(crate) retries: Option<i32>,
    pub(crate) ratio: f64,
    pub(crate) urgent: bool,
}
