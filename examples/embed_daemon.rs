//! Embedding the daemon: the same wiring `hookd serve` uses (`daemon::Builder`), on a Unix
//! socket of this program's choosing, stopped by the program rather than a signal. A client
//! dispatches through it and prints the Outcome; then the program shuts it down cleanly.
//!
//! ```text
//! cargo run --example embed_daemon
//! ```

use std::time::Duration;

use hookd::config::LoadOptions;
use hookd::daemon::client::{self, Answer};
use hookd::daemon::wire::DispatchRequest;
use hookd::host::Host;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let config_dir = dir.path().join("infer");
    std::fs::create_dir_all(&config_dir)?;
    std::fs::write(
        config_dir.join("config.yaml"),
        "tools: {bash: {mode: {all: {allow: ['^echo session ended$']}}}}\n",
    )?;
    std::fs::write(
        config_dir.join("hooks.yaml"),
        "enabled: true\nhooks: [{name: note, hook: post_session, command: 'echo session ended'}]\n",
    )?;
    let socket = dir.path().join("hookd.sock");
    // As `hookd serve --config-dir DIR --socket PATH` would read it: this process's variables
    // and directory, taken once here (the library never reads the process itself).
    let host = Host::of_this_process();
    let builder = hookd::daemon::Builder::new(LoadOptions::from_host(&host, Some(config_dir))?)?
        .socket(&socket)
        .grace(Duration::from_secs(2));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (up_tx, up) = std::sync::mpsc::channel();
    let daemon = runtime.spawn(builder.run(
        async move {
            let _ = stopped.await;
        },
        move |listening| {
            let _ = up_tx.send(listening);
        },
    ));
    println!(
        "listening on {:?}",
        up.recv_timeout(Duration::from_secs(10))?
    );

    // A client, as an agent's adapter is: one dispatch over the socket.
    let request = DispatchRequest {
        point: "post_session".into(),
        context: Some(serde_json::json!({"session_id": "embedded"})),
        ..Default::default()
    };
    match client::dispatch(
        &socket,
        &request,
        Duration::from_secs(2),
        Duration::from_secs(30),
    )? {
        Answer::Outcome(outcome) => println!("outcome: {outcome}"),
        other => return Err(format!("the daemon did not dispatch: {other:?}").into()),
    }

    // Stopped by the program: running dispatches get the grace period, the socket is removed.
    let _ = stop.send(());
    runtime.block_on(daemon)??;
    println!("stopped; socket left behind: {}", socket.exists());
    Ok(())
}
