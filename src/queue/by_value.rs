//! Removal by value, written once for the delayed queue's pending elements
//! (`lua/remove.lua`) and the destination list's ready values
//! (`lua/list_remove.lua`): `remove`, `remove_all` and `retain_all`.

use std::borrow::Borrow;

use bytes::Bytes;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::Result;
use crate::queue::handle::QueueHandle;
use crate::wire::codec;
use crate::wire::keys::KeyRole;

/// Values one `lua/list_remove.lua` run looks for (each costs a scan of the list).
const LIST_REMOVE_CHUNK: usize = 16;

/// Which elements a removal takes: the mode argument of both scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ByValue {
    /// The first element (in list order) whose payload is one of the values.
    First,
    /// Every element whose payload is one of the values.
    All,
    /// Every element whose payload is none of the values (pending only).
    AllBut,
}

impl ByValue {
    /// The scripts' spelling of the mode.
    pub(super) fn arg(self) -> Value {
        Value::from(match self {
            ByValue::First => "first",
            ByValue::All => "all",
            ByValue::AllBut => "retain",
        })
    }
}

/// Where a removal looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Among {
    /// The delayed queue's pending elements (timeout set and pending list).
    Pending,
    /// The destination list's ready values.
    Ready,
}

impl<T: 'static> QueueHandle<T> {
    /// Removes the first element `among` whose payload equals `value`'s;
    /// whether there was one.
    pub(super) async fn remove(&self, among: Among, value: &T) -> Result<bool> {
        let payload = codec::encode(&*self.codec, value)?;
        Ok(self.remove_by(among, ByValue::First, vec![payload]).await? == 1)
    }

    /// Removes every element `among` whose payload equals one of `values`';
    /// how many.
    pub(super) async fn remove_all<I, B>(&self, among: Among, values: I) -> Result<usize>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let payloads = self.encode_all(values)?;
        if payloads.is_empty() {
            return Ok(0);
        }
        self.remove_by(among, ByValue::All, payloads).await
    }

    /// One removal by value of `payloads`, as requests that may be resent
    /// (see `QueueHandle::request`): one run of `lua/remove.lua` for pending
    /// elements, runs of [`LIST_REMOVE_CHUNK`] values of
    /// `lua/list_remove.lua` for ready ones.
    pub(super) async fn remove_by(&self, among: Among, mode: ByValue, payloads: Vec<Bytes>) -> Result<usize> {
        let args = |payloads: &[Bytes]| {
            let mut args = Vec::with_capacity(payloads.len() + 1);
            args.push(mode.arg());
            args.extend(payloads.iter().cloned().map(Value::Bytes));
            args
        };
        match among {
            Among::Pending => {
                let keys = SCRIPTS.remove.keys(&self.keys).build();
                let value = self.request(&SCRIPTS.remove, keys, args(&payloads)).await?;
                Ok(reply::int(&value)? as usize)
            }
            Among::Ready => {
                // Each value costs a scan of the list: a bounded number per script.
                let mut removed = 0;
                for chunk in payloads.chunks(LIST_REMOVE_CHUNK) {
                    let keys = SCRIPTS
                        .list_remove
                        .keys(&self.keys)
                        .with(KeyRole::List, self.name())
                        .build();
                    let value = self.request(&SCRIPTS.list_remove, keys, args(chunk)).await?;
                    removed += reply::int(&value)? as usize;
                }
                Ok(removed)
            }
        }
    }
}
