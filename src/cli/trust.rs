//! `hookd trust`: review a project's `.infer/`, then trust, list or revoke.

use super::error::{Done, Error};
use super::{around, out};
use crate::config::{self, LoadOptions};
use crate::display::visible;
use crate::host::Host;

/// `hookd trust`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// List the trusted projects.
    #[arg(long, conflicts_with = "revoke")]
    pub(super) list: bool,
    /// Stop trusting this project.
    #[arg(long)]
    pub(super) revoke: bool,
}

/// `hookd trust`.
pub(super) fn run(a: Args) -> Done {
    let mut opts =
        LoadOptions::from_host(&Host::of_this_process(), None).map_err(Error::CurrentDir)?;
    let Some(store_path) = opts.trust_file.clone() else {
        return Err(Error::Cannot(
            "no place for trust records: set HOME, XDG_CONFIG_HOME or HOOKD_TRUST_FILE".into(),
        ));
    };
    let store = config::TrustStore::new(store_path);
    let project = visible(&opts.project_dir.display().to_string()).into_owned();
    if a.list {
        out(&store.list_text().map_err(Error::library)?);
        return Ok(0);
    }
    if a.revoke {
        return match store.revoke(&opts.project_dir).map_err(Error::library)? {
            true => {
                out(&format!("hookd: {project} is no longer trusted\n"));
                Ok(0)
            }
            false => Err(Error::No(format!("hookd: {project} was not trusted"))),
        };
    }
    // Load as if trusted, to show everything the project would be able to do.
    opts.trust_project = true;
    let config = config::load(&opts).map_err(|e| {
        eprintln!("hookd: the project's configuration must load before it can be trusted");
        Error::Config(e)
    })?;
    let Some(review) = crate::review::trust_review(&config, &around(Some(&opts))) else {
        return Err(Error::No(format!(
            "hookd: there is nothing to trust: no .infer/ configuration in {}, and none of your hooks runs its files",
            opts.project_dir.display()
        )));
    };
    out(&review.text);
    store
        .record(&opts.project_dir, &review.fingerprint)
        .map_err(Error::library)?;
    out("hookd: trusted. Any change to these files makes the project untrusted again; `hookd trust --revoke` undoes this.\n");
    Ok(0)
}
