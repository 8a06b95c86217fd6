from __future__ import annotations

from scrapers.html_facts import extract_page_facts

PAGE = """<!doctype html>
<html><head>
  <title>  Acme   Outdoor Gear </title>
  <meta name="description" content="Tents, packs and boots since 1982.">
  <meta property="og:image" content="/share.jpg">
  <meta name="theme-color" content="#1A73E8">
  <link rel="shortcut icon" href="/favicon.ico">
  <link rel="apple-touch-icon" href="/touch.png">
  <style>
    #fab { color: #333; }                       /* an id selector is not a colour */
    .btn { background: #1a73e8; border-color: #1A73E8 }
    @media (min-width: 600px) { .hero { color: rgb(255, 87, 34); background: #fff } }
  </style>
</head>
<body>
  <header style="background-color:#FFF"><img class="site-logo" src="img/logo.svg" alt="Acme"></header>
  <h1>Gear for the <em>long</em> trail</h1>
  <h2>Tents</h2><h3>Ultralight</h3><h4>not collected</h4>
  <a href="https://www.facebook.com/sharer/sharer.php?u=https://acme.test">share</a>
  <a href="https://www.facebook.com/acmegear">Facebook</a>
  <a href="https://instagram.com/acmegear/">Instagram</a>
  <a href="https://x.com/acmegear">X</a>
  <a href="https://twitter.com/intent/tweet?text=hi">tweet this</a>
  <a href="//www.linkedin.com/company/acme">LinkedIn</a>
  <a href="https://youtube.com/@acme">YouTube</a>
  <a href="https://www.tiktok.com/@acme">TikTok</a>
  <a href="https://pinterest.com/acme/">Pinterest</a>
  <a href="https://notfacebook.com/acme">lookalike</a>
</body></html>"""


def test_it_reads_the_facts_of_a_page():
    facts = extract_page_facts(PAGE, "https://acme.test/about/")

    assert facts["title"] == "Acme Outdoor Gear"
    assert facts["description"] == "Tents, packs and boots since 1982."
    assert facts["logo"] == "https://acme.test/about/img/logo.svg"
    assert facts["colors"] == ["#1a73e8", "#ffffff", "#333333", "#ff5722"]
    assert facts["social_links"] == {
        "facebook": "https://www.facebook.com/acmegear",
        "instagram": "https://instagram.com/acmegear/",
        "x": "https://x.com/acmegear",
        "linkedin": "https://www.linkedin.com/company/acme",
        "youtube": "https://youtube.com/@acme",
        "tiktok": "https://www.tiktok.com/@acme",
        "pinterest": "https://pinterest.com/acme/",
    }
    assert facts["headings"] == [
        {"level": 1, "text": "Gear for the long trail"},
        {"level": 2, "text": "Tents"},
        {"level": 3, "text": "Ultralight"},
    ]


def test_logo_falls_back_through_icons_to_the_share_image():
    icon = '<link rel="icon" href="/i.png"><meta property="og:image" content="/s.jpg">'
    touch = icon + '<link rel="apple-touch-icon" href="/t.png">'
    share = '<meta property="og:image" content="https://cdn.test/s.jpg">'

    assert extract_page_facts(touch, "https://a.test/x")["logo"] == "https://a.test/t.png"
    assert extract_page_facts(icon, "https://a.test/x")["logo"] == "https://a.test/i.png"
    assert extract_page_facts(share, "https://a.test/x")["logo"] == "https://cdn.test/s.jpg"
    assert extract_page_facts("<p>no logo</p>", "https://a.test/x")["logo"] is None


def test_base_href_and_og_fallbacks():
    html = (
        '<base href="https://static.test/v2/"><meta property="og:title" content="OG title">'
        '<meta property="og:description" content="OG description"><img src="brand-logo.png">'
    )

    facts = extract_page_facts(html, "https://a.test/")

    assert facts["title"] == "OG title"
    assert facts["description"] == "OG description"
    assert facts["logo"] == "https://static.test/v2/brand-logo.png"


def test_colours_are_ranked_by_frequency_and_capped():
    styles = "".join(f'<p style="color:#{i:02x}0000">x</p>' for i in range(12))
    styles += '<p style="color:#0b0000"></p>' * 3

    colors = extract_page_facts(styles, "https://a.test/")["colors"]

    assert colors[0] == "#0b0000"
    assert len(colors) == 8
    assert colors[1:] == [f"#{i:02x}0000" for i in range(7)]


def test_headings_are_capped_at_thirty():
    html = "".join(f"<h2>Section {i}</h2>" for i in range(40))

    headings = extract_page_facts(html, "https://a.test/")["headings"]

    assert len(headings) == 30
    assert headings[-1] == {"level": 2, "text": "Section 29"}


def test_broken_html_still_gives_what_can_be_read():
    html = '<html><head><title>Half a page</title><style>.a{color:#abc}<body><h1>Open heading<h2>Next<a href="https://instagram.com/x'

    facts = extract_page_facts(html, "https://a.test/")

    assert facts["title"] == "Half a page"
    assert facts["colors"] == ["#aabbcc"]

    for junk in ["", "<<<>>>", "<![if x]><h1>odd</h1>", "\x00\x01<h1", "<a href='javascript:alert(1)'>"]:
        facts = extract_page_facts(junk, "https://a.test/")
        assert set(facts) == {"title", "description", "logo", "colors", "social_links", "headings"}
        assert facts["logo"] is None
        assert facts["social_links"] == {}


def test_unclosed_heading_ends_at_the_next_heading():
    facts = extract_page_facts("<h1>First<h2>Second</h2>", "https://a.test/")

    assert facts["headings"] == [{"level": 1, "text": "First"}, {"level": 2, "text": "Second"}]
