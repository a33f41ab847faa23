//! Chinese news pages written for these tests: each covers a layout and byline/date pattern
//! seen on Chinese news sites, with the expected title, time, author and body.

use extractor::extract;
use url::Url;

fn url() -> Url {
    Url::parse("https://news.example.cn/a/20190220/1.html").unwrap()
}

/// Every paragraph of `body` is in the extracted `text`.
fn assert_has_body(text: &str, body: &[&str]) {
    for p in body {
        assert!(text.contains(p), "missing paragraph {p:?} in {text:?}");
    }
}

const BODY_1: [&str; 3] = [
    "新华社北京2月20日电，记者从国家气象局获悉，今年春节期间全国大部地区天气晴好，气温较常年同期偏高，出行条件总体良好。",
    "气象专家表示，受冷空气影响，本周后期北方地区将有一次降温过程，提醒公众注意添衣保暖，合理安排出行计划。",
    "据介绍，南方地区降雨天气较多，部分地区可能出现强对流天气，有关部门已经做好应急准备工作，确保群众生命财产安全。",
];

/// A portal article: title with site suffixes, a date line with `来源`, `作者：` in the
/// header, related links, a share bar, and `责任编辑` after the body.
fn portal_page() -> String {
    format!(
        r#"<html><head><meta charset="utf-8"><title>春节期间全国大部天气晴好_凤凰网资讯_凤凰网</title></head>
<body>
<div class="header"><a href="/">首页</a> <a href="/news">资讯</a> <a href="/finance">财经</a></div>
<div class="main">
  <h1>春节期间全国大部天气晴好</h1>
  <div class="info"><span class="time">2019-02-20 02:26:00</span> <span>来源：新华网</span> <span>作者：张三</span></div>
  <div class="share">分享到：微信 微博 QQ空间</div>
  <div id="artical_real" class="content">
    <p>{}</p>
    <p>{}</p>
    <p>{}</p>
    <p class="editor">责任编辑：李四 NN001</p>
  </div>
  <div class="related"><h3>相关新闻</h3><ul>
    <li><a href="/a/1.html">北方地区迎来降温 2019-02-19</a></li>
    <li><a href="/a/2.html">南方多地出现降雨</a></li>
  </ul></div>
</div>
<div class="footer">Copyright © 2019 凤凰网 版权所有</div>
</body></html>"#,
        BODY_1[0], BODY_1[1], BODY_1[2]
    )
}

#[test]
fn portal_article() {
    let a = extract(&portal_page(), &url());
    assert_eq!(a.title.as_deref(), Some("春节期间全国大部天气晴好"));
    assert_eq!(a.published.as_deref(), Some("2019-02-20T02:26:00"));
    assert_eq!(a.author.as_deref(), Some("张三"));
    assert_has_body(&a.text, &BODY_1);
    assert!(
        !a.text.contains("分享到"),
        "share bar in body: {:?}",
        a.text
    );
    assert!(
        !a.text.contains("南方多地出现降雨"),
        "related links in body: {:?}",
        a.text
    );
    assert!(!a.text.contains("版权所有"), "footer in body: {:?}", a.text);
    assert!(a
        .outlinks
        .iter()
        .any(|l| l.url == "https://news.example.cn/a/1.html"));
}

const BODY_2: [&str; 3] = [
    "本报讯 昨天上午，市第十五届人民代表大会第三次会议在市会议中心隆重开幕，来自全市各条战线的代表出席会议。",
    "市长在政府工作报告中回顾了过去一年的工作，提出今年经济社会发展的主要目标，要求各级政府加快转变职能，提高服务水平。",
    "报告指出，2018年12月全市已完成年度重点项目建设任务，新增就业岗位超过五万个，城乡居民收入稳步增长。",
];

/// A newspaper site with table layout, a Chinese date line (`2019年02月20日 09:30`), the
/// reporter in the header (`本报记者`), and a date inside the body prose that must not win.
fn newspaper_page() -> String {
    format!(
        r#"<html><head><title>市人代会隆重开幕 - 晚报网</title></head><body>
<table width="100%"><tr><td class="nav"><a href="/">首页</a> | <a href="/bd">本地</a> | <a href="/gn">国内</a></td></tr></table>
<table width="960"><tr>
<td width="700" valign="top">
  <div class="title">市人代会隆重开幕</div>
  <div class="sub">2019年02月20日 09:30　晚报网　本报记者 王五 通讯员 赵六</div>
  <div class="text">{}<br><br>{}<br><br>{}<br></div>
</td>
<td width="260" valign="top" class="right"><div class="hot"><b>热点排行</b><br>
  <a href="/x/1">1. 新春灯会今晚开幕</a><br><a href="/x/2">2. 地铁五号线试运行</a><br><a href="/x/3">3. 寒假结束中小学开学</a></div></td>
</tr></table>
<div class="bottom">关于我们 | 联系我们 | 网站地图 ICP备12345678号</div>
</body></html>"#,
        BODY_2[0], BODY_2[1], BODY_2[2]
    )
}

#[test]
fn newspaper_table_layout() {
    let a = extract(&newspaper_page(), &url());
    assert_eq!(a.title.as_deref(), Some("市人代会隆重开幕"));
    assert_eq!(a.published.as_deref(), Some("2019-02-20T09:30:00"));
    assert!(
        a.author.as_deref().is_some_and(|x| x.starts_with("王五")),
        "author {:?}",
        a.author
    );
    assert_has_body(&a.text, &BODY_2);
    assert!(!a.text.contains("热点排行"));
    assert!(!a.text.contains("地铁五号线"));
}

/// Metadata in `<meta>` and JSON-LD wins over the text; English date forms too.
#[test]
fn metadata_and_english_dates() {
    let body = BODY_1.map(|p| format!("<p>{p}</p>")).join("");
    let html = format!(
        r#"<html lang="zh-CN"><head><title>天气晴好 | 示例新闻</title>
<meta property="og:site_name" content="示例新闻">
<meta property="article:published_time" content="2019-02-20T10:26:00+08:00">
<script type="application/ld+json">{{"@type":"NewsArticle","author":{{"@type":"Person","name":"陈七"}}}}</script>
</head><body><article>{body}</article></body></html>"#
    );
    let a = extract(&html, &url());
    assert_eq!(a.published.as_deref(), Some("2019-02-20T10:26:00+08:00"));
    assert_eq!(a.author.as_deref(), Some("陈七"));
    assert_eq!(a.title.as_deref(), Some("天气晴好"));
    assert_eq!(a.site_name.as_deref(), Some("示例新闻"));
    assert_eq!(a.lang.as_deref(), Some("zh-CN"));

    let english = format!(
        r#"<html><body><h1>Weather</h1><p class="byline">By Jane Roe</p><p class="dateline">Feb 20, 2019</p>
<div class="story">{body}</div></body></html>"#
    );
    let a = extract(&english, &url());
    assert_eq!(a.published.as_deref(), Some("2019-02-20"));
    assert_eq!(a.author.as_deref(), Some("Jane Roe"));
}

/// A date written only inside the body's prose is not the publish time.
#[test]
fn no_date_from_body_prose() {
    let html = format!(
        "<html><body><h1>标题</h1><div class=content><p>{}</p><p>{}</p><p>{}</p></div></body></html>",
        BODY_2[0], BODY_2[1], "会议将持续到2019年2月25日，期间代表们将审议政府工作报告、计划报告和预算报告等多项重要文件，并选举产生新一届领导。"
    );
    let a = extract(&html, &url());
    assert_eq!(a.published, None);
}

/// A forum thread: the first post is the body; the poster's name sits in an author cell with
/// the poster's counts, and the replies' posters (one-character names) are not the author.
#[test]
fn forum_thread() {
    let post = [BODY_2[0], BODY_2[1], BODY_2[2]].join("<br><br>");
    let reply = |n: u32, who: &str, text: &str| {
        format!(
            r#"<table class="t_msg"><tr><td class="postauthor"><a href="/u/{n}">{who}</a></td>
<td class="postcontent"><div class="postinfo">发表于 2019-03-02 1{n}:00 {n}#</div><div class="t_msgfont">{text}</div></td></tr></table>"#
        )
    };
    let html = format!(
        r#"<html><head><meta charset="utf-8"><title>市人代会开幕讨论 - 某某论坛</title></head><body>
<div id="nav"><a href="/">论坛首页</a> &raquo; <a href="/f/1">社会话题</a></div>
<table class="t_msg"><tr><td class="postauthor"><a href="/u/1">路人甲</a><br>帖子 120<br>积分 300</td>
<td class="postcontent"><div class="postinfo">发表于 2019-03-02 10:21 只看该作者 1#</div>
<div class="t_msgfont" id="postmessage_1">{post}</div></td></tr></table>
{}{}
<div class="footer">Powered by Discuz! 版权所有</div></body></html>"#,
        reply(2, "乙", "顶一下"),
        reply(3, "丙", "说得好，支持楼主！")
    );
    let a = extract(&html, &url());
    assert_eq!(a.author.as_deref(), Some("路人甲"));
    assert_eq!(a.published.as_deref(), Some("2019-03-02T10:21:00"));
    assert_has_body(&a.text, &BODY_2);
    assert!(!a.text.contains("Powered by"), "{:?}", a.text);
}
