# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_crawl_global_optspecs
    string join \n out= j/jobs= max-connections= max-pages= max-pages-per-host= max-time= max-bytes= max-depth= requisites= find= i/ignore-case scope= include= exclude= delay-factor= min-delay= max-delay= host-connections= rate= max-rate= host-rules= no-sitemaps ignore-page-robots near-duplicates= near-duplicates-threshold= user-agent= header= load-cookies= cookie-jar= proxy= no-proxy insecure ca-cert= no-tls-resume timeout= low-speed-limit= low-speed-time= idle-timeout= retries= retry-wait= max-error-ratio= max-body= accept-type= reject-type= keep-truncated allow-private warc-compression= zstd-level= warc-max-size= no-warc-block-digest warc-block-digest text= markdown no-warc no-payload-dedupe dedupe-against= cache-entries= buffer-entries= log-format= log= save= link-graph extract= extract-out= extract-db= restart recrawl-budget= focus= focus-window= shard= exchange= q/quiet v/verbose h/help V/version
end

function __fish_crawl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_crawl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_crawl_using_subcommand
    set -l cmd (__fish_crawl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c crawl -n "__fish_crawl_needs_command" -l out -d 'State directory: seen set, frontier, WARC files, summary' -r -F
complete -c crawl -n "__fish_crawl_needs_command" -s j -l jobs -d 'N worker threads, each one request at a time (1 to 4096): at most N requests in flight. Default: as many requests in flight as the work needs, up to --max-connections' -r
complete -c crawl -n "__fish_crawl_needs_command" -l max-connections -d 'Without -j: at most N requests in flight, 1 to 16384. Default: min((open files - 256) / 3, available memory / 4 / 1 MiB), within 16 to 4096' -r
complete -c crawl -n "__fish_crawl_needs_command" -l max-pages -d 'Stop after this many pages have been fetched (with --shard: by this shard). Default: no limit' -r
complete -c crawl -n "__fish_crawl_needs_command" -l max-pages-per-host -d 'Fetch at most this many pages from one host (host:port). Default: no limit' -r
complete -c crawl -n "__fish_crawl_needs_command" -l max-time -d 'Stop after this long (90m, 2h, 1h30m, 30s, or plain seconds). Default: no limit' -r
complete -c crawl -n "__fish_crawl_needs_command" -l max-bytes -d 'Stop after receiving this many bytes of response bodies (suffixes K, M, G). Default: no limit' -r
complete -c crawl -n "__fish_crawl_needs_command" -l max-depth -d 'Follow links at most this many hops from a seed (seeds are depth 0). Default: 100' -r
complete -c crawl -n "__fish_crawl_needs_command" -l requisites -d 'Fetch what pages need to render (page requisites) one hop past --max-depth' -r -f -a "scope\t'One hop past `--max-depth`, on the hosts of the scope'
any\t'One hop past `--max-depth`, on any host; their own links are not followed'
off\t'No further than hyperlinks go'"
complete -c crawl -n "__fish_crawl_needs_command" -l find -d 'Stop at the first fetched page that contains TEXT and print where (at most 100 characters)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l scope -d 'Which hosts the crawl may visit beyond the seeds' -r -f -a "host\t'Only the seeds\' hosts (host and port)'
domain\t'The seeds\' registrable domains (example.com covers www.example.com), any port'
any\t'Anywhere'"
complete -c crawl -n "__fish_crawl_needs_command" -l include -d 'Only crawl URLs matching this regular expression (repeatable: any may match)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l exclude -d 'Never crawl URLs matching this regular expression (repeatable)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l delay-factor -d 'Wait this many times the last response time before the next request to a host' -r
complete -c crawl -n "__fish_crawl_needs_command" -l min-delay -d 'Never contact a host sooner than this many seconds after its last response' -r
complete -c crawl -n "__fish_crawl_needs_command" -l max-delay -d 'Cap the delay rule at this many seconds' -r
complete -c crawl -n "__fish_crawl_needs_command" -l host-connections -d 'At most N requests in flight per host, each connection resting by the delay rule' -r
complete -c crawl -n "__fish_crawl_needs_command" -l rate -d 'At most N requests per second to any one host (fractional: 0.2 is one every 5 s). Default: no limit beyond the delay rule' -r
complete -c crawl -n "__fish_crawl_needs_command" -l max-rate -d 'At most N requests per second across all hosts (fractional allowed). Default: no limit' -r
complete -c crawl -n "__fish_crawl_needs_command" -l host-rules -d 'Per-host overrides of --rate, --host-connections and --max-pages-per-host, read from FILE' -r -F
complete -c crawl -n "__fish_crawl_needs_command" -l near-duplicates -d 'Note HTML pages whose visible text nearly repeats a page crawled before them' -r -f -a "off\t'No signature is computed'
note\t'Noted `near-duplicate:URL` in the URL log and counted; links followed as on any page'
skip-links\t'Noted and counted, and the page\'s links are not followed'"
complete -c crawl -n "__fish_crawl_needs_command" -l near-duplicates-threshold -d 'The resemblance from which a page is a near-duplicate of an earlier one (--near-duplicates)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l user-agent -d 'User-Agent header; its first word (before `/`) is the robots.txt token' -r
complete -c crawl -n "__fish_crawl_needs_command" -l header -d 'Send this header with every request, as `Name: value` (repeatable)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l load-cookies -d 'Send the cookies of FILE (a Netscape cookie file, as curl and wget write them)' -r -F
complete -c crawl -n "__fish_crawl_needs_command" -l cookie-jar -d 'Keep cookies in FILE: read at the start if it exists, written back at each checkpoint and at the end (and at the start: an unwritable FILE is an error)' -r -F
complete -c crawl -n "__fish_crawl_needs_command" -l proxy -d 'Fetch everything through this proxy: http://, https:// (CONNECT), socks5:// or socks5h://. Default: the environment' -r
complete -c crawl -n "__fish_crawl_needs_command" -l ca-cert -d 'Also trust the certificates of this PEM file as roots (repeatable)' -r -F
complete -c crawl -n "__fish_crawl_needs_command" -l timeout -d 'Give up on a request after this many seconds (connect, headers and body together)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l low-speed-limit -d 'Give up on a response that comes slower than this many bytes a second (0: never)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l low-speed-time -d 'The span --low-speed-limit is measured over, in seconds' -r
complete -c crawl -n "__fish_crawl_needs_command" -l idle-timeout -d 'Close a kept connection once unused for this many seconds (0: keep none)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l retries -d 'Ask for a page again at most N times after a transient failure (0: never)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l retry-wait -d 'Wait this long before the first retry of a transient failure (10s, 2m, 50ms)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l max-error-ratio -d 'Exit with status 3 if more than this share of fetches failed (0 to 1)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l max-body -d 'Keep at most this many bytes of a response body (suffixes K, M, G)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l accept-type -d 'Read only bodies of this media type (`text/html`, `text/*`; repeatable: any may match). Default: any' -r
complete -c crawl -n "__fish_crawl_needs_command" -l reject-type -d 'Never read bodies of this media type (`image/*`, `application/pdf`; repeatable)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l warc-compression -d 'How each WARC record is compressed: `zstd` (.warc.zst) or `gzip` (.warc.gz)' -r -f -a "zstd\t'One zstd frame per record (`.warc.zst`); read by FastWARC, or `zstdcat` into any reader'
gzip\t'One gzip member per record (`.warc.gz`); read by warcio, pywb and replayweb.page'"
complete -c crawl -n "__fish_crawl_needs_command" -l zstd-level -d 'The zstd level of each WARC record: -7 to 19, default 1 (negative: zstd\'s fast levels)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l warc-max-size -d 'Start a new WARC file once the current one reaches this size (suffixes K, M, G)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l text -d 'Keep each HTML and plain-text page\'s text: `main` (the default) or `full`' -r -f -a "main\t'The main content, boilerplate removed (`main_text`)'
full\t'All visible text (`full_text`)'"
complete -c crawl -n "__fish_crawl_needs_command" -l dedupe-against -d 'Also count payloads archived by the crawl in DIR as archived before (repeatable)' -r -F
complete -c crawl -n "__fish_crawl_needs_command" -l cache-entries -d 'Entries in the CLOCK cache of recently seen URL checksums' -r
complete -c crawl -n "__fish_crawl_needs_command" -l buffer-entries -d 'Cache misses buffered before they are merged into the on-disk seen set' -r
complete -c crawl -n "__fish_crawl_needs_command" -l log-format -d 'Format of the URL log: `tsv` (tab-separated columns) or `jsonl` (JSON lines)' -r -f -a "tsv\t'Tab-separated columns'
jsonl\t'One JSON object per line'"
complete -c crawl -n "__fish_crawl_needs_command" -l log -d 'Write the URL log to FILE (created or truncated) instead of stdout. Default: stdout' -r -F
complete -c crawl -n "__fish_crawl_needs_command" -l save -d 'Also save each fetched HTML page as a file: `files` writes DIR/pages/, `markdown` DIR/markdown/ (comma-separated or repeated for both)' -r -f -a "files\t'Each HTML page as a file under DIR/pages/'
markdown\t'Each HTML page\'s main content as Markdown under DIR/markdown/ (implies --markdown)'"
complete -c crawl -n "__fish_crawl_needs_command" -l extract -d 'Take fields out of pages by the rule sets in RULES: JSON lines to --extract-out' -r -F
complete -c crawl -n "__fish_crawl_needs_command" -l extract-out -d 'Where --extract\'s JSON lines go (appended to); `-` is stdout (needs --log FILE). Default: DIR/extract.jsonl' -r -F
complete -c crawl -n "__fish_crawl_needs_command" -l extract-db -d 'Also write --extract\'s objects as rows of the SQLite database FILE (created if absent)' -r -F
complete -c crawl -n "__fish_crawl_needs_command" -l recrawl-budget -d 'A recrawl asks for at most N pages: those likeliest to have changed since their last visit. Default: every page, as a recrawl without it' -r
complete -c crawl -n "__fish_crawl_needs_command" -l focus -d 'Focused crawl: favour URLs linked from pages containing TEXT and from good hubs' -r
complete -c crawl -n "__fish_crawl_needs_command" -l focus-window -d 'URLs held in the --focus priority window, in memory (about 100 bytes each)' -r
complete -c crawl -n "__fish_crawl_needs_command" -l shard -d 'Crawl as shard K of N (counted from 0): only the hosts that hash to K' -r
complete -c crawl -n "__fish_crawl_needs_command" -l exchange -d 'The broker the shards exchange URLs through: redis://HOST:PORT[/DB] (with --shard)' -r
complete -c crawl -n "__fish_crawl_needs_command" -s i -l ignore-case -d 'Match --find\'s TEXT regardless of case (Unicode case folding). Needs --find'
complete -c crawl -n "__fish_crawl_needs_command" -l no-sitemaps -d 'Do not read sitemaps'
complete -c crawl -n "__fish_crawl_needs_command" -l ignore-page-robots -d 'Follow links regardless of page-level robots directives (for archiving)'
complete -c crawl -n "__fish_crawl_needs_command" -l no-proxy -d 'Use no proxy, whatever the environment says'
complete -c crawl -n "__fish_crawl_needs_command" -l insecure -d 'Do not check TLS certificates (a warning is printed): for test servers only'
complete -c crawl -n "__fish_crawl_needs_command" -l no-tls-resume -d 'Make a full TLS handshake on every connection instead of resuming the server\'s session'
complete -c crawl -n "__fish_crawl_needs_command" -l keep-truncated -d 'Read the first --max-body bytes of a body whose Content-Length is over --max-body'
complete -c crawl -n "__fish_crawl_needs_command" -l allow-private -d 'Connect to private addresses too (loopback, RFC 1918, link-local, CGNAT, unique-local, …)'
complete -c crawl -n "__fish_crawl_needs_command" -l no-warc-block-digest -d 'Leave the WARC-Block-Digest out of response records (they keep their payload digest)'
complete -c crawl -n "__fish_crawl_needs_command" -l warc-block-digest -d 'The default since response records carry their block digest again: accepted, so that scripts written for the release where it was opt-in keep working'
complete -c crawl -n "__fish_crawl_needs_command" -l markdown -d 'Write each HTML page\'s main content as Markdown'
complete -c crawl -n "__fish_crawl_needs_command" -l no-warc -d 'Do not write WARC files (the URL log and the crawl are unchanged)'
complete -c crawl -n "__fish_crawl_needs_command" -l no-payload-dedupe -d 'Archive every payload whole, even one archived before (turns payload dedupe off)'
complete -c crawl -n "__fish_crawl_needs_command" -l link-graph -d 'Also record the link graph: DIR/links.tsv, one `from_url TAB to_url` line per link'
complete -c crawl -n "__fish_crawl_needs_command" -l restart -d 'On a state directory whose crawl completed, crawl afresh instead of recrawling'
complete -c crawl -n "__fish_crawl_needs_command" -s q -l quiet -d 'Print nothing on stderr but errors (no progress, no summary)'
complete -c crawl -n "__fish_crawl_needs_command" -s v -l verbose -d 'Without a terminal, print a status line on stderr every 10 seconds and at the end'
complete -c crawl -n "__fish_crawl_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c crawl -n "__fish_crawl_needs_command" -s V -l version -d 'Print version'
complete -c crawl -n "__fish_crawl_needs_command" -a "dedupe" -d 'Print each line of stdin the first time it is ever seen (this run or earlier ones)'
complete -c crawl -n "__fish_crawl_needs_command" -a "cachesim" -d 'Replay a URL trace through the paper\'s cache policies and print miss rates by cache size'
complete -c crawl -n "__fish_crawl_needs_command" -a "rank" -d 'Print the top hubs and authorities (Kleinberg\'s HITS) of a crawl\'s link graph'
complete -c crawl -n "__fish_crawl_needs_command" -a "wacz" -d 'Package a crawl\'s WARC files as a WACZ file, for replayweb.page and pywb'
complete -c crawl -n "__fish_crawl_needs_command" -a "extract" -d 'Take fields, text and Markdown out of the pages of existing WARC files, without crawling'
complete -c crawl -n "__fish_crawl_needs_command" -a "neardups" -d 'List the clusters of near-duplicate pages a crawl found (with --near-duplicates)'
complete -c crawl -n "__fish_crawl_needs_command" -a "shards" -d 'Show the state of a sharded crawl: each shard\'s report in the broker, and the totals'
complete -c crawl -n "__fish_crawl_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crawl -n "__fish_crawl_using_subcommand dedupe" -l state -d 'Directory holding the seen set; created if missing, reused across runs' -r -F
complete -c crawl -n "__fish_crawl_using_subcommand dedupe" -l cache-entries -d 'Entries in the CLOCK cache of recently seen checksums' -r
complete -c crawl -n "__fish_crawl_using_subcommand dedupe" -l buffer-entries -d 'Misses held in memory before they are sorted and spilled to disk' -r
complete -c crawl -n "__fish_crawl_using_subcommand dedupe" -l raw -d 'Compare lines byte for byte instead of as URLs'
complete -c crawl -n "__fish_crawl_using_subcommand dedupe" -s q -l quiet -d 'Print nothing on stderr but errors (no summary)'
complete -c crawl -n "__fish_crawl_using_subcommand dedupe" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c crawl -n "__fish_crawl_using_subcommand dedupe" -s V -l version -d 'Print version'
complete -c crawl -n "__fish_crawl_using_subcommand cachesim" -l sizes -d 'Cache sizes to simulate, comma-separated; `2^N` is allowed' -r
complete -c crawl -n "__fish_crawl_using_subcommand cachesim" -l svg -d 'Also draw the miss rates as an SVG plot into FILE (replaced atomically)' -r -F
complete -c crawl -n "__fish_crawl_using_subcommand cachesim" -l seed -d 'Seed of RANDOM\'s evictions (the same seed gives the same table)' -r
complete -c crawl -n "__fish_crawl_using_subcommand cachesim" -l counts -d 'Print miss counts instead of miss rates'
complete -c crawl -n "__fish_crawl_using_subcommand cachesim" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c crawl -n "__fish_crawl_using_subcommand cachesim" -s V -l version -d 'Print version'
complete -c crawl -n "__fish_crawl_using_subcommand rank" -l top -d 'How many authorities and how many hubs to print' -r
complete -c crawl -n "__fish_crawl_using_subcommand rank" -l max-rounds -d 'Stop iterating after this many rounds even if the top scores are not yet stable' -r
complete -c crawl -n "__fish_crawl_using_subcommand rank" -l tmp -d 'Directory for the temporary edge file (default: DIR); removed when done' -r -F
complete -c crawl -n "__fish_crawl_using_subcommand rank" -s q -l quiet -d 'Print nothing on stderr but errors (no summary line)'
complete -c crawl -n "__fish_crawl_using_subcommand rank" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c crawl -n "__fish_crawl_using_subcommand rank" -s V -l version -d 'Print version'
complete -c crawl -n "__fish_crawl_using_subcommand wacz" -s o -l output -d 'The WACZ file to write (replaced if it exists)' -r -F
complete -c crawl -n "__fish_crawl_using_subcommand wacz" -s q -l quiet -d 'Print nothing on stderr but errors (no summary line)'
complete -c crawl -n "__fish_crawl_using_subcommand wacz" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c crawl -n "__fish_crawl_using_subcommand wacz" -s V -l version -d 'Print version'
complete -c crawl -n "__fish_crawl_using_subcommand extract" -l extract -d 'The rules file (the format of `crawl --extract`)' -r -F
complete -c crawl -n "__fish_crawl_using_subcommand extract" -l text -d 'Each page\'s text, as `crawl --text`: `main` (the default) or `full`' -r -f -a "main\t'The main content, boilerplate removed (`main_text`)'
full\t'All visible text (`full_text`)'"
complete -c crawl -n "__fish_crawl_using_subcommand extract" -l content-out -d 'Where the --text and --markdown JSON lines go (appended to; `-`: stdout). Default: stdout' -r -F
complete -c crawl -n "__fish_crawl_using_subcommand extract" -l extract-out -d 'Where the JSON lines go (appended to). Default: stdout' -r -F
complete -c crawl -n "__fish_crawl_using_subcommand extract" -l extract-db -d 'Also write the objects as rows of the SQLite database FILE (as `crawl --extract-db`)' -r -F
complete -c crawl -n "__fish_crawl_using_subcommand extract" -l markdown -d 'Each HTML page\'s main content as Markdown, as `crawl --markdown`'
complete -c crawl -n "__fish_crawl_using_subcommand extract" -s q -l quiet -d 'Print nothing on stderr but errors (no summary line)'
complete -c crawl -n "__fish_crawl_using_subcommand extract" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c crawl -n "__fish_crawl_using_subcommand extract" -s V -l version -d 'Print version'
complete -c crawl -n "__fish_crawl_using_subcommand neardups" -s q -l quiet -d 'Print nothing on stderr but errors (no summary line)'
complete -c crawl -n "__fish_crawl_using_subcommand neardups" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c crawl -n "__fish_crawl_using_subcommand neardups" -s V -l version -d 'Print version'
complete -c crawl -n "__fish_crawl_using_subcommand shards" -l exchange -d 'The broker the shards exchange URLs through (their --exchange)' -r
complete -c crawl -n "__fish_crawl_using_subcommand shards" -l seeds -d 'The seed file the shards were started with (it names the crawl in the broker)' -r
complete -c crawl -n "__fish_crawl_using_subcommand shards" -l count -d 'N, the number of shards (of --shard K/N)' -r
complete -c crawl -n "__fish_crawl_using_subcommand shards" -l status -d 'Print the shards\' reports and their totals (the one thing `crawl shards` does so far)'
complete -c crawl -n "__fish_crawl_using_subcommand shards" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c crawl -n "__fish_crawl_using_subcommand shards" -s V -l version -d 'Print version'
complete -c crawl -n "__fish_crawl_using_subcommand help; and not __fish_seen_subcommand_from dedupe cachesim rank wacz extract neardups shards help" -f -a "dedupe" -d 'Print each line of stdin the first time it is ever seen (this run or earlier ones)'
complete -c crawl -n "__fish_crawl_using_subcommand help; and not __fish_seen_subcommand_from dedupe cachesim rank wacz extract neardups shards help" -f -a "cachesim" -d 'Replay a URL trace through the paper\'s cache policies and print miss rates by cache size'
complete -c crawl -n "__fish_crawl_using_subcommand help; and not __fish_seen_subcommand_from dedupe cachesim rank wacz extract neardups shards help" -f -a "rank" -d 'Print the top hubs and authorities (Kleinberg\'s HITS) of a crawl\'s link graph'
complete -c crawl -n "__fish_crawl_using_subcommand help; and not __fish_seen_subcommand_from dedupe cachesim rank wacz extract neardups shards help" -f -a "wacz" -d 'Package a crawl\'s WARC files as a WACZ file, for replayweb.page and pywb'
complete -c crawl -n "__fish_crawl_using_subcommand help; and not __fish_seen_subcommand_from dedupe cachesim rank wacz extract neardups shards help" -f -a "extract" -d 'Take fields, text and Markdown out of the pages of existing WARC files, without crawling'
complete -c crawl -n "__fish_crawl_using_subcommand help; and not __fish_seen_subcommand_from dedupe cachesim rank wacz extract neardups shards help" -f -a "neardups" -d 'List the clusters of near-duplicate pages a crawl found (with --near-duplicates)'
complete -c crawl -n "__fish_crawl_using_subcommand help; and not __fish_seen_subcommand_from dedupe cachesim rank wacz extract neardups shards help" -f -a "shards" -d 'Show the state of a sharded crawl: each shard\'s report in the broker, and the totals'
complete -c crawl -n "__fish_crawl_using_subcommand help; and not __fish_seen_subcommand_from dedupe cachesim rank wacz extract neardups shards help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
