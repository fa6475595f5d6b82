//! Tenants, and the bearer tokens an operator issues for them. A tenant is a store of its own
//! under `<root>/tenants/<name>/` (its own database, bodies and index), made like the store at
//! `<root>` (same backend and embedder); a token is bound to one tenant, a trusted context in
//! it, a speaker and a role, and kept in `<root>/tokens.json` as its SHA-256 digest only.
//!
//! Why a store per tenant rather than a tenant key in every query: isolation then holds by
//! construction — no query, index or body path of one tenant can name another's, whatever a
//! future query forgets — and a tenant can be exported, moved or deleted as a directory. The
//! cost (a database handle and job loop per open tenant) is small next to an engine's; models,
//! the heavy part, are shared between stores by the composition root.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use crate::error::{ComposeError, Doing, During, Result};
use arbor_domain::model::Actor;
use arbor_domain::read_chain::TrustedContext;
use arbor_domain::time::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::save_config;
use crate::config::{Backend, CONFIG_FILE, StoreConfig};
use crate::durable::{Readers, replace_file};
use crate::open::{Database, open_index};
use arbor_adapters_sqlite::OpenMode;

/// The operator's record of issued tokens, under the store root.
pub const TOKENS_FILE: &str = "tokens.json";

/// Where tenants' stores live, under the store root.
pub const TENANTS_DIR: &str = "tenants";

/// What a token prefix says: that this string is an Arbor token (for secret scanners, and for
/// people who find one in a log).
const TOKEN_PREFIX: &str = "arbor_";

/// One issued token, as the operator's record keeps it: never the token itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IssuedToken {
    /// A public handle (`tok_…`), for listing and revoking; says nothing about the secret.
    pub id: String,
    /// SHA-256 of the token, hex. The token is 256 random bits, so a plain digest is as hard to
    /// reverse as the token is to guess; a slow password hash would buy nothing.
    pub sha256: String,
    pub tenant: String,
    /// An operator's token reviews what waits for a person and reads the metrics; an agent's
    /// reads and writes memory only.
    pub operator: bool,
    /// Who the words sent with this token are from: `agent`, `user` or `integration`.
    pub speaker: Actor,
    /// The trusted context every request with this token acts in, inside its tenant's store.
    pub context: TrustedContext,
    pub created_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TokenFile {
    tokens: Vec<IssuedToken>,
}

/// A token to issue.
#[derive(Debug, Clone)]
pub struct NewToken {
    pub tenant: String,
    pub operator: bool,
    pub speaker: Actor,
    pub context: TrustedContext,
    pub label: Option<String>,
}

/// Checks a tenant's name: 1 to 40 of `a-z`, `0-9` and `_`, starting with a letter or digit.
/// It names a directory (and, on Postgres, a schema), so nothing else is allowed.
pub fn check_tenant_name(name: &str) -> Result<()> {
    let valid = !name.is_empty()
        && name.len() <= 40
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.starts_with('_');
    if !valid {
        return Err(ComposeError::Refused(format!(
            "tenant name {name:?} must be 1 to 40 of a-z, 0-9 and _, not starting with _"
        )));
    }
    Ok(())
}

/// Where `tenant`'s store is.
pub fn tenant_root(root: &Path, tenant: &str) -> Result<PathBuf> {
    check_tenant_name(tenant)?;
    Ok(root.join(TENANTS_DIR).join(tenant))
}

/// The hex SHA-256 of a presented token, as the record keeps it.
pub fn token_digest(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh secret shaped like an issued token: the owner's token a single-store server makes
/// for its memory centre when none is given.
pub fn new_secret() -> Result<String> {
    Ok(format!("{TOKEN_PREFIX}{}", random_hex(32)?))
}

fn random_hex(bytes: usize) -> Result<String> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|e| ComposeError::Io {
        doing: "reading the operating system's random source".to_owned(),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(hex(&buffer))
}

/// Issues a token for `new`, creating its tenant's store if it is the tenant's first. Returns
/// the record and the token, which is shown once and kept nowhere.
pub async fn issue_token(root: &Path, new: NewToken) -> Result<(IssuedToken, String)> {
    let _lock = lock_tokens(root)?;
    let tenant_dir = tenant_root(root, &new.tenant)?;
    if !matches!(new.speaker, Actor::Agent | Actor::User | Actor::Integration) {
        return Err(ComposeError::Refused("a token speaks as an agent, a user or an integration".to_owned()));
    }
    if new.label.as_deref().is_some_and(|l| l.chars().count() > 200 || l.chars().any(char::is_control)) {
        return Err(ComposeError::Refused("a label is at most 200 characters, without control characters".to_owned()));
    }
    create_tenant_store(root, &tenant_dir, &new.tenant).await?;
    let mut file = read_token_file(root)?;
    let token = format!("{TOKEN_PREFIX}{}", random_hex(32)?);
    // Ids are public handles, so they are random too; one is never given twice.
    let id = loop {
        let id = format!("tok_{}", random_hex(6)?);
        if !file.tokens.iter().any(|t| t.id == id) {
            break id;
        }
    };
    let issued = IssuedToken {
        id,
        sha256: token_digest(&token),
        tenant: new.tenant,
        operator: new.operator,
        speaker: new.speaker,
        context: new.context,
        created_at: Timestamp::now(),
        label: new.label,
    };
    file.tokens.push(issued.clone());
    write_token_file(root, &file)?;
    Ok((issued, token))
}

/// Every issued token's record, oldest first.
pub fn list_tokens(root: &Path) -> Result<Vec<IssuedToken>> {
    Ok(read_token_file(root)?.tokens)
}

/// Revokes the token `id` (`tok_…`): a server stops accepting it at its next request. Whether
/// it was there.
pub fn revoke_token(root: &Path, id: &str) -> Result<bool> {
    let _lock = lock_tokens(root)?;
    let mut file = read_token_file(root)?;
    let before = file.tokens.len();
    file.tokens.retain(|t| t.id != id);
    if file.tokens.len() == before {
        return Ok(false);
    }
    write_token_file(root, &file)?;
    Ok(true)
}

fn read_token_file(root: &Path) -> Result<TokenFile> {
    let path = root.join(TOKENS_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| ComposeError::settings(&path, format!("{} is not a token file: {e}", path.display()))),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(TokenFile::default()),
        Err(error) => Err(error).io(|| format!("reading {}", path.display())),
    }
}

/// Writes the token file whole or not at all, readable by its owner only.
fn write_token_file(root: &Path, file: &TokenFile) -> Result<()> {
    let path = root.join(TOKENS_FILE);
    let text = serde_json::to_string_pretty(file)
        .map_err(|e| ComposeError::Refused(format!("{} cannot be written: {e}", path.display())))?;
    write_private(&path, (text + "\n").as_bytes())
}

/// Writes `contents` to `path` whole or not at all, readable and writable by this user only:
/// tokens and other secrets a store keeps.
pub fn write_private(path: &Path, contents: &[u8]) -> Result<()> {
    replace_file(path, contents, Readers::OwnerOnly)
}

/// Held while the token file is changed, so two `arbor tokens` commands cannot lose each
/// other's change.
struct TokensLock {
    _file: File,
}

fn lock_tokens(root: &Path) -> Result<TokensLock> {
    if !root.join(CONFIG_FILE).exists() {
        return Err(ComposeError::Refused(format!(
            "there is no Arbor store at {} (create one with `arbor --root {} init`)",
            root.display(),
            root.display()
        )));
    }
    let path = root.join(format!(".{TOKENS_FILE}.lock"));
    let file = crate::reports::lock_file(&path)?;
    for _ in 0..100 {
        match file.try_lock() {
            Ok(()) => return Ok(TokensLock { _file: file }),
            Err(TryLockError::WouldBlock) => std::thread::sleep(std::time::Duration::from_millis(50)),
            Err(TryLockError::Error(error)) => {
                return Err(error).io(|| format!("locking {}", path.display()));
            }
        }
    }
    Err(ComposeError::Busy(format!("another `arbor tokens` command holds {}; try again", path.display())))
}

/// Makes `tenant`'s store, like the store at `root` (backend, embedder, index; on Postgres, a
/// schema of its own), unless it is there.
async fn create_tenant_store(root: &Path, tenant_dir: &Path, tenant: &str) -> Result<()> {
    if tenant_dir.join(CONFIG_FILE).exists() {
        return Ok(());
    }
    let parent = StoreConfig::load(root)?;
    let mut config = StoreConfig { created_at: Timestamp::now(), previous_embedder: None, ..parent };
    if let Some(postgres) = config.postgres.as_mut() {
        postgres.schema = format!("{}_t_{tenant}", postgres.schema);
    }
    if config.backend == Backend::Sqlite {
        config.postgres = None;
    }
    std::fs::create_dir_all(tenant_dir).io(|| format!("creating {}", tenant_dir.display()))?;
    let database = Database::open(tenant_dir, &config, OpenMode::Create)
        .await
        .during(|| format!("creating the database for tenant {tenant}"))?;
    open_index(tenant_dir, &config, &database).await?;
    std::fs::create_dir_all(tenant_dir.join(arbor_domain::paths::MEMORY_DIR))
        .io(|| format!("creating {}", tenant_dir.display()))?;
    save_config(tenant_dir, &config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_names_name_one_directory() {
        for good in ["acme", "a", "tenant_42", "0day"] {
            assert!(check_tenant_name(good).is_ok(), "{good}");
        }
        for bad in ["", "_x", "Acme", "a-b", "../x", "a/b", "a.b", &"x".repeat(41), "é"] {
            assert!(check_tenant_name(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn tokens_are_kept_as_digests_and_revoked_by_id() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        let options = crate::InitOptions { embedder: crate::EmbedderChoice::Hashing, ..Default::default() };
        crate::init(&root, &options).await.unwrap();
        let context = TrustedContext::Project { project: arbor_domain::id::ScopeId::parse("p1").unwrap() };
        let new = NewToken { tenant: "acme".into(), operator: false, speaker: Actor::Agent, context, label: None };
        let (issued, token) = issue_token(&root, new.clone()).await.unwrap();
        assert!(token.starts_with("arbor_") && token.len() == 6 + 64, "{token}");
        let file = std::fs::read_to_string(root.join(TOKENS_FILE)).unwrap();
        assert!(!file.contains(&token) && file.contains(&token_digest(&token)), "{file}");
        assert!(root.join("tenants/acme").join(CONFIG_FILE).exists());
        let (second, _) = issue_token(&root, new).await.unwrap();
        assert_ne!(issued.id, second.id);
        assert!(revoke_token(&root, &issued.id).unwrap());
        assert!(!revoke_token(&root, &issued.id).unwrap());
        assert_eq!(list_tokens(&root).unwrap(), vec![second]);
    }
}
