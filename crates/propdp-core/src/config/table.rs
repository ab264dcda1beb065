//! Tables that come in kinds named by a tag key (`kind = "dpgd"`,
//! `law = "student_t"`, `model = "huber"`): each kind lists the keys it
//! takes, and a key another kind takes is refused naming the field, the kind
//! given and the kinds that take it — before serde reads the table.

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::ConfigError;

/// The keys each kind of a tagged table takes (the tag itself excluded).
pub(crate) struct Kinds {
    /// Path of the table in the config, e.g. `algorithm`.
    pub table: &'static str,
    /// The tag key, e.g. `kind`.
    pub tag: &'static str,
    /// (kind name, its keys; required keys carry no `?`, optional ones end in `?`).
    pub kinds: &'static [(&'static str, &'static [&'static str])],
}

impl Kinds {
    /// Read a tagged table: the tag must name a kind, every key must be one
    /// the kind takes, every required key must be present; then serde builds `T`.
    pub(crate) fn read<T: DeserializeOwned>(&self, table: toml::Table) -> Result<T, ConfigError> {
        // the messages are built on the error paths only (this runs for every config read)
        let field = |k: &str| format!("{}.{k}", self.table);
        let names = || {
            let names: Vec<String> = self.kinds.iter().map(|(n, _)| format!("\"{n}\"")).collect();
            names.join(" | ")
        };
        let kind = match table.get(self.tag) {
            Some(toml::Value::String(s)) => s.as_str(),
            Some(other) => return Err(ConfigError::range(&field(self.tag), other, &names())),
            None => return Err(ConfigError::missing(&field(self.tag), &names())),
        };
        let Some((_, keys)) = self.kinds.iter().find(|(n, _)| *n == kind) else {
            return Err(ConfigError::range(&field(self.tag), format!("\"{kind}\""), &names()));
        };
        if let Some(k) = keys.iter().find(|k| !k.ends_with('?') && !table.contains_key(**k)) {
            return Err(ConfigError::missing(
                &field(k),
                &format!("required by {} = \"{kind}\"", self.tag),
            ));
        }
        fn bare<'a>(k: &&'a str) -> &'a str {
            k.trim_end_matches('?')
        }
        for key in table.keys().filter(|k| *k != self.tag) {
            if !keys.iter().map(bare).any(|k| k == key) {
                let takes = keys.iter().map(|k| field(bare(k))).collect::<Vec<_>>().join(", ");
                let takers: Vec<String> = self
                    .kinds
                    .iter()
                    .filter(|(_, ks)| ks.iter().map(bare).any(|k| k == key))
                    .map(|(n, _)| format!("{} = \"{n}\"", self.tag))
                    .collect();
                let why = if takers.is_empty() {
                    format!("unknown key; {} = \"{kind}\" takes {takes}", self.tag)
                } else {
                    format!(
                        "only {} takes it; {} = \"{kind}\" takes {takes}",
                        takers.join(" or "),
                        self.tag
                    )
                };
                return Err(ConfigError::not_applicable(&field(key), &why));
            }
        }
        T::deserialize(toml::Value::Table(table.clone())).map_err(|e| {
            let message = e.to_string();
            match culprit(&table, self.tag, &message) {
                Some((key, value)) => {
                    let expected = message
                        .split_once("expected ")
                        .map_or("a value of its type", |(_, x)| x);
                    ConfigError::range(&field(&key), value, expected.trim_end())
                }
                None => ConfigError::Parse(format!("[{}]: {message}", self.table)),
            }
        })
    }

    /// The tag and every key any kind takes, each once, in order.
    pub(crate) fn all_keys(&self) -> Vec<&'static str> {
        let mut keys = vec![self.tag];
        for k in self.kinds.iter().flat_map(|(_, ks)| ks.iter()) {
            let k = k.trim_end_matches('?');
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        keys
    }

    /// A serde `deserialize_with` body: the table, read by [`Kinds::read`].
    pub(crate) fn deserialize<'de, D: serde::Deserializer<'de>, T: DeserializeOwned>(
        &self,
        d: D,
    ) -> Result<T, D::Error> {
        let table = toml::Table::deserialize(d)?;
        self.read(table).map_err(serde::de::Error::custom)
    }
}

/// The key (dotted, within a nested table) whose value serde's `message`
/// refuses, and that value as TOML, when exactly one value of the table
/// reads as the "invalid type" the message quotes (`string "abc"`,
/// `boolean `true``, `floating point `5.5``, `integer `5``), is the
/// "unknown field" it names, or is a table without the "missing field" it
/// names: serde's errors on a table name no key.
fn culprit(table: &toml::Table, tag: &str, message: &str) -> Option<(String, String)> {
    fn quoted(v: &toml::Value) -> Vec<String> {
        match v {
            toml::Value::String(s) => vec![format!("string {s:?}")],
            toml::Value::Boolean(b) => vec![format!("boolean `{b}`")],
            toml::Value::Float(x) => vec![format!("floating point `{x}`"), format!("floating point `{x:?}`")],
            toml::Value::Integer(i) => vec![format!("integer `{i}`")],
            _ => Vec::new(),
        }
    }
    fn walk(prefix: &str, t: &toml::Table, tag: &str, message: &str, hits: &mut Vec<(String, String)>) {
        for (k, v) in t.iter().filter(|(k, _)| !(prefix.is_empty() && *k == tag)) {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            let unknown = !prefix.is_empty() && message.contains(&format!("unknown field `{k}`"));
            if let toml::Value::Table(inner) = v {
                let missing = message
                    .split_once("missing field `")
                    .and_then(|(_, rest)| rest.split_once('`'))
                    .is_some_and(|(field, _)| !inner.contains_key(field));
                if missing {
                    hits.push((key.clone(), v.to_string()));
                }
                walk(&key, inner, tag, message, hits);
            } else if unknown || quoted(v).iter().any(|q| message.contains(q.as_str())) {
                hits.push((key, v.to_string()));
            }
        }
    }
    let mut hits = Vec::new();
    walk("", table, tag, message, &mut hits);
    (hits.len() == 1).then(|| hits.remove(0))
}
