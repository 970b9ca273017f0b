use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::io::AsyncReadExt as _;
use tokio::io::AsyncWriteExt as _;
use tokio::io::BufReader;

use super::*;

/// Runs a relay over in-memory pipes: the client's lines are written
/// first (and its input closed), then the server's; returns what each
/// side received and the traffic.
async fn relay_of(client: &str, server: &str) -> (String, String, Traffic) {
    let (mut client_w, client_in) = tokio::io::duplex(1 << 16);
    let (client_out, mut client_r) = tokio::io::duplex(1 << 16);
    let (server_in, mut server_r) = tokio::io::duplex(1 << 16);
    let (mut server_w, server_out) = tokio::io::duplex(1 << 16);
    let ended = Arc::new(tokio::sync::Notify::new());
    let relay = tokio::spawn(relay(
        BufReader::new(client_in),
        client_out,
        server_in,
        BufReader::new(server_out),
        ended.clone(),
    ));
    client_w.write_all(client.as_bytes()).await.unwrap();
    drop(client_w);
    ended.notified().await;
    let mut to_server = String::new();
    server_r.read_to_string(&mut to_server).await.unwrap();
    server_w.write_all(server.as_bytes()).await.unwrap();
    drop(server_w);
    let traffic = relay.await.unwrap();
    let mut to_client = String::new();
    client_r.read_to_string(&mut to_client).await.unwrap();
    (to_server, to_client, traffic)
}

#[tokio::test]
async fn every_line_passes_unchanged_and_calls_are_noted() {
    let client = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"m":"a"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"sum"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
        "\n",
        "not json\r\n",
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
    );
    let server = concat!(
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"3"}]}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"a"}],"isError":false}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown tool: nope"}}"#,
        "\n",
    );
    let (to_server, to_client, traffic) = relay_of(client, server).await;
    assert_eq!(to_server, client);
    assert_eq!(to_client, server);
    let calls: Vec<(&str, usize, &Answer)> = traffic
        .calls
        .iter()
        .map(|c| (c.name.as_str(), c.step, &c.answer))
        .collect();
    assert_eq!(
        calls,
        vec![
            (
                "echo",
                0,
                &Answer::Result(json!({"content":[{"type":"text","text":"a"}],"isError":false}))
            ),
            (
                "sum",
                0,
                &Answer::Result(json!({"content":[{"type":"text","text":"3"}]}))
            ),
            ("slow", 0, &Answer::Cancelled),
            (
                "nope",
                0,
                &Answer::Error {
                    code: -32602,
                    message: "Unknown tool: nope".to_owned(),
                    data: None
                }
            ),
        ]
    );
    assert_eq!(traffic.calls[1].arguments, json!({}));
    assert_eq!(traffic.other_lines, 1);
}

#[test]
fn calls_sent_after_the_earlier_ones_were_answered_start_a_new_step() {
    let mut state = State::default();
    let call =
        |id: u64| json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"t"}});
    let answer = |id: u64| json!({"jsonrpc":"2.0","id":id,"result":{"content":[]}});
    state.client_sent(&call(1));
    state.server_sent(&answer(1));
    state.client_sent(&call(2));
    state.client_sent(&call(3));
    state.server_sent(&answer(3));
    state.client_sent(&call(4));
    state.server_sent(&answer(2));
    state.server_sent(&answer(4));
    state.client_sent(&call(5));
    let steps: Vec<usize> = state.traffic.calls.iter().map(|c| c.step).collect();
    assert_eq!(steps, [0, 1, 1, 1, 2]);
}
