"""Exchange renderings (curl, dict, text, repr) and the masking they all go through."""

from __future__ import annotations

import json
import shlex

from hypothesis import given
from hypothesis import strategies as st

from pytest_osfoundry._masking import mask_headers, mask_token, mask_url, secrets_in
from pytest_osfoundry.client import Exchange

TOKEN = "tok-EXCHANGE-s3cr3t-0042"


def make(
    token: str = TOKEN,
    *,
    url: str = "https://osf.test/mcp",
    request_body: bytes = b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
    response_body: bytes = b'{"jsonrpc":"2.0","id":1,"result":{}}',
    status: int = 200,
) -> Exchange:
    return Exchange(
        method="POST",
        url=url,
        request_headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {token}",
            "Content-Length": "40",
        },
        request_body=request_body,
        status=status,
        response_headers={"content-type": "application/json"},
        response_body=response_body,
        elapsed=0.0125,
    )


def renderings(exchange: Exchange) -> str:
    return "\n".join(
        [
            exchange.to_curl(),
            json.dumps(exchange.to_dict(), ensure_ascii=False),
            exchange.format(),
            str(exchange),
            repr(exchange),
        ]
    )


def test_curl_line_is_ready_to_run_and_masked() -> None:
    line = make().to_curl()
    assert line == (
        "curl -sS -X POST https://osf.test/mcp "
        "-H 'Content-Type: application/json' -H 'Authorization: Bearer ***' "
        """--data-binary '{"jsonrpc":"2.0","id":1,"method":"ping"}'"""
    )
    args = shlex.split(line)
    assert args[-1] == '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert TOKEN not in line


def test_curl_quotes_awkward_urls_and_bodies() -> None:
    exchange = make(url="https://osf.test/a b?x=1&y='2'", request_body=b"it's @ here")
    args = shlex.split(exchange.to_curl())
    assert args[4] == "https://osf.test/a b?x=1&y='2'"
    assert args[-2:] == ["--data-binary", "it's @ here"]
    at_body = make(request_body=b"@/etc/passwd")
    assert shlex.split(at_body.to_curl())[-2:] == ["--data-raw", "@/etc/passwd"]


def test_unmasked_forms_show_the_token_only_when_asked() -> None:
    exchange = make()
    assert f"Bearer {TOKEN}" in exchange.to_curl(mask=False)
    assert exchange.to_dict(mask=False)["request"]["headers"]["Authorization"] == (
        f"Bearer {TOKEN}"
    )
    assert TOKEN in exchange.format(mask=False)


def test_token_never_appears_in_masked_renderings() -> None:
    body = json.dumps({"echo": f"Bearer {TOKEN}", "q": TOKEN}).encode()
    exchange = make(
        url=f"https://osf.test/mcp?access_token={TOKEN}&keep=1",
        request_body=body,
        response_body=body,
    )
    text = renderings(exchange)
    assert TOKEN not in text
    assert "access_token=***&keep=1" in text
    assert "Bearer ***" in text


@given(
    st.text(
        alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=",
        min_size=8,
        max_size=64,
    ).map(lambda s: "tk_" + s)  # the prefix keeps tokens from equalling fixed text
)
def test_any_bearer_token_is_masked_everywhere(token: str) -> None:
    body = json.dumps({"token": token}).encode()
    exchange = make(token, url=f"https://osf.test/mcp?token={token}", response_body=body)
    assert token not in renderings(exchange)


def test_to_dict_shape_truncation_and_binary() -> None:
    long_body = ("x" * 5000).encode()
    record = make(response_body=long_body, request_body=b"\xff\xfe").to_dict()
    assert record["method"] == "POST"
    assert record["url"] == "https://osf.test/mcp"
    assert record["elapsed"] == 0.0125
    assert record["request"]["body"] == "<2 bytes, not UTF-8>"
    assert record["response"]["status"] == 200
    assert record["response"]["headers"] == {"content-type": "application/json"}
    body = record["response"]["body"]
    assert body.startswith("x" * 4000)
    assert "x" * 4001 not in body
    assert body.endswith("[truncated: 5000 characters in all]")
    assert record["error"] is None
    json.dumps(record)


def test_format_shows_request_and_response() -> None:
    text = make(status=401).format()
    assert text.startswith("POST https://osf.test/mcp\n")
    assert "Authorization: Bearer ***" in text
    assert '"method":"ping"' in text
    assert "<- 401 (12.5 ms)" in text
    assert "content-type: application/json" in text


def test_lost_reply_renderings() -> None:
    exchange = Exchange(
        "POST",
        "https://osf.test/mcp",
        {"Authorization": f"Bearer {TOKEN}"},
        b"{}",
        0,
        elapsed=0.5,
        error=f"dropped after Bearer {TOKEN}",
    )
    record = exchange.to_dict()
    assert record["response"] is None
    assert record["error"] == "dropped after Bearer ***"
    assert "no reply" in exchange.format()
    assert "no reply" in repr(exchange)
    assert TOKEN not in renderings(exchange)


def test_mask_token_forms() -> None:
    secret = "a/b+c d"
    text = f"raw={secret} pct=a%2Fb%2Bc%20d plus=a%2Fb%2Bc+d json={json.dumps(secret)}"
    masked = mask_token(text, [secret, None, ""])
    assert masked == 'raw=*** pct=*** plus=*** json="***"'
    assert mask_token("nothing here", []) == "nothing here"
    assert mask_token("short abcd", ["abcd", "abcd-long"]) == "short ***"
    assert mask_token("a 123 b", ["123"]) == "a 123 b"  # too short to be a credential


def test_mask_helpers() -> None:
    assert mask_url("https://h/p?api_key=k1&x=2&refresh_token=r#f") == (
        "https://h/p?api_key=***&x=2&refresh_token=***#f"
    )
    headers = {
        "Authorization": "Bearer abc123",
        "Proxy-Authorization": "justatoken",
        "Cookie": "sid=1",
        "X-Other": "has abc123 inside",
        "Mcp-Session-Id": "sess-1",
    }
    assert mask_headers(headers, secrets_in("", headers)) == {
        "Authorization": "Bearer ***",
        "Proxy-Authorization": "***",
        "Cookie": "***",
        "X-Other": "has *** inside",
        "Mcp-Session-Id": "sess-1",
    }
    assert sorted(secrets_in("https://h/?token=a%2Bb", {})) == ["a%2Bb", "a+b"]
