"""The page's stylesheet and script (table sorting, tabs), inlined in its head and body."""

from __future__ import annotations

STYLE = """
*{box-sizing:border-box}
html,body{overflow-x:hidden}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;
background:#fafafa;font-size:14px}
header{background:#1f3b57;color:#fff;padding:14px 24px}
header h1{margin:0 0 4px 0;font-size:22px}
header p{margin:0;font-size:13px;opacity:.9}
nav{display:flex;gap:4px;padding:8px 24px 0 24px;background:#e9eef3;flex-wrap:wrap}
nav button{border:0;padding:8px 14px;background:#d5dee7;cursor:pointer;font-size:14px;
border-radius:6px 6px 0 0}
nav button.active{background:#fafafa;font-weight:600}
section.tab{padding:8px 24px 16px 24px;max-width:100%}
section.tab h2{font-size:19px;margin:10px 0 6px 0}
section.tab h3{font-size:16px;margin:18px 0 4px 0}
.box{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:6px 0 16px 0;font-size:13px;background:#fff}
th,td{border:1px solid #d0d7de;padding:3px 6px;text-align:right}
td{white-space:nowrap}
th{background:#eef2f6;vertical-align:bottom;font-weight:600;min-width:3.5em;max-width:9em;
white-space:normal;overflow-wrap:break-word;hyphens:manual}
th.text,td.text{text-align:left}
td.sys{white-space:normal;overflow-wrap:break-word;min-width:12em;max-width:20em}
td.na{color:#999}
td small{color:#666;font-size:11px}
th.ds{background:#e6eef7;max-width:7em;font-size:12px}
table.sortable th{cursor:pointer}
table.sortable th.asc::after{content:" \\25B2"}
table.sortable th.desc::after{content:" \\25BC"}
tbody tr:nth-child(even){background:#f6f8fa}
tbody tr:hover{background:#fff6d9}
.plot{background:#fff;border:1px solid #d0d7de;margin:8px 0 4px 0;width:100%}
.caption{font-size:12.5px;color:#555;margin:0 0 18px 0;max-width:1100px}
dl dt{font-weight:600;margin-top:10px}
dl dd{margin-left:18px;max-width:1000px}
.note{font-size:13px;color:#444;max-width:1100px}
.warning{color:#8a3b00}
footer{padding:8px 24px 24px 24px;font-size:12.5px;color:#555}
"""


SCRIPT = """
(function(){
  function key(cell){
    if(cell.dataset.v!==undefined){var v=parseFloat(cell.dataset.v);return isNaN(v)?'':v;}
    var t=cell.textContent.trim();
    var n=parseFloat(t.replace(/^[^0-9.+\\-]+/,''));
    return isNaN(n)?t.toLowerCase():n;
  }
  function compare(a,b){
    if(a===''&&b!=='')return 1; if(b===''&&a!=='')return -1;
    if(typeof a==='number'&&typeof b==='number')return a-b;
    if(typeof a==='number')return -1; if(typeof b==='number')return 1;
    return a<b?-1:(a>b?1:0);
  }
  document.querySelectorAll('table.sortable').forEach(function(table){
    table.querySelectorAll('thead th').forEach(function(th,col){
      th.addEventListener('click',function(){
        var asc=!th.classList.contains('asc');
        table.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc');});
        th.classList.add(asc?'asc':'desc');
        var body=table.tBodies[0];
        var rows=Array.prototype.slice.call(body.rows);
        rows.sort(function(r1,r2){
          var c=compare(key(r1.cells[col]),key(r2.cells[col]));
          return asc?c:-c;
        });
        rows.forEach(function(r){body.appendChild(r);});
      });
    });
  });
  var buttons=document.querySelectorAll('nav button');
  function show(id){
    document.querySelectorAll('section.tab').forEach(function(s){
      s.style.display=(s.id===id)?'block':'none';
      if(s.id===id&&window.Plotly){
        s.querySelectorAll('.js-plotly-plot').forEach(function(p){Plotly.Plots.resize(p);});
      }
    });
    buttons.forEach(function(b){b.classList.toggle('active',b.dataset.tab===id);});
  }
  buttons.forEach(function(b){b.addEventListener('click',function(){
    show(b.dataset.tab); history.replaceState(null,'','#'+b.dataset.tab);});});
  var wanted=location.hash.slice(1);
  if(wanted&&document.getElementById(wanted))show(wanted);
  else if(buttons.length)show(buttons[0].dataset.tab);
  if(wanted)window.addEventListener('load',function(){
    setTimeout(function(){window.scrollTo(0,0);},0);});
})();
"""
