/* Linux lab report as one page: report.txt's tables and the SVG charts gnuplot drew, inline in report.html (no file or network read by the page). */
#include "lab/linux_report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char style[] =
	"body{font-family:sans-serif;margin:1em;max-width:1200px}pre{font-size:12px;"
	"overflow-x:auto;background:#f8f8f8;padding:.5em}figure.chart{margin:.5em 0}"
	"figure.chart svg{max-width:min(100%,1100px);height:auto}figcaption{font-size:12px;color:#666}"
	".banner{background:#fdd;color:#900;font-weight:bold;padding:.6em}";

int lr_write_html(const struct ll_options *o, const char *text, const char *const *charts,
		  unsigned ncharts, struct error *err)
{
	char svg[4400];
	struct lab_html_page page;
	int rc = lab_html_begin(&page, o->out_dir, err);
	if (rc)
		return rc;
	FILE *f = page.f;
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<title>msivm lab --guest linux %s</title><style>%s</style></head>\n<body>\n"
		   "<h1>msivm lab --guest linux</h1>\n", o->date, style);
	if (o->interrupted)
		fputs("<p class=\"banner\">PARTIAL REPORT: the lab was interrupted</p>\n", f);
	if (o->runs_failed)
		fprintf(f, "<p class=\"banner\">%u of %u runs failed (see the end of the tables)</p>\n",
			o->runs_failed, o->runs_done);
	unsigned drawn = 0;
	for (unsigned i = 0; i < ncharts; i++) {
		snprintf(svg, sizeof(svg), "%s/%s", o->out_dir, charts[i]);
		drawn += lab_html_inline_svg(f, svg, charts[i]);
	}
	if (!drawn)
		fputs("<p class=\"banner\">no chart drawn (see the line \"charts\" at the end of the "
		      "tables)</p>\n", f);
	fputs("<h2>Tables (report.txt)</h2>\n<pre>", f);
	lab_html_esc(f, text);
	fputs("</pre>\n<p>Every raw run, console and standard error: report.json.</p>\n", f);
	return lab_html_end(&page, err);
}
