/* The back office's one script (no inline script: a strict Content-Security-Policy can serve
   these pages). Lists fit 1400 px (docs/back-office.md, "Lists that fit 1400 px"). */
if (window.localStorage && localStorage.getItem("django.admin.navSidebarIsOpen") === null) {
  localStorage.setItem("django.admin.navSidebarIsOpen", "false");
}
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("#result_list a").forEach(function (link) {
    const text = link.textContent.trim();
    if (!link.title) { link.title = text; }
    if (/^[a-z]+_[0-9A-Z]{20,}$/.test(text)) { link.classList.add("an-id"); }
  });
});
