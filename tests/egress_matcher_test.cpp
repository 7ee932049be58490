// The egress allowlist language: the seed's wildcard rules, ports, IP literals,
// rejected shapes (at spec decode, naming the entry), the shipped lists, and
// the resolved-address check.
#define BOOST_TEST_MODULE egress_matcher
#include <boost/test/unit_test.hpp>

#include "address_filter.hpp"
#include "ccsandbox/domain_pattern.hpp"
#include "ccsandbox/sandbox_spec.hpp"
#include "domain_matcher.hpp"
#include "egress_lists.hpp"
#include "support/temp_tree.hpp"

#include <algorithm>
#include <cstdlib>

using namespace ccsandbox;
namespace ip = boost::asio::ip;

namespace {

bool allows(const std::vector<std::string> &allow, const std::string &host, std::uint16_t port,
            const std::vector<std::string> &deny = {}) {
  DomainMatcher m(allow, deny);
  auto t = DomainPattern::target(host, port);
  return t && m.decide(*t).allowed;
}

}  // namespace

BOOST_AUTO_TEST_CASE(seed_wildcard_examples) {
  // Leading wildcard: any depth of subdomain, never the apex.
  BOOST_TEST(allows({"*.example.com"}, "a.example.com", 443));
  BOOST_TEST(allows({"*.example.com"}, "a.b.example.com", 443));
  BOOST_TEST(!allows({"*.example.com"}, "example.com", 443));
  BOOST_TEST(!allows({"*.example.com"}, "badexample.com", 443));
  BOOST_TEST(!allows({"*.example.com"}, "example.com.evil.org", 443));
  // Middle wildcard: exactly one label.
  BOOST_TEST(allows({"bedrock.*.amazonaws.com"}, "bedrock.us-east-1.amazonaws.com", 443));
  BOOST_TEST(!allows({"bedrock.*.amazonaws.com"}, "bedrock.evil.attacker.amazonaws.com", 443));
  BOOST_TEST(!allows({"bedrock.*.amazonaws.com"}, "bedrock.amazonaws.com", 443));
  BOOST_TEST(!allows({"bedrock.*.amazonaws.com"}, "xbedrock.us-east-1.amazonaws.com", 443));
  // Exact.
  BOOST_TEST(allows({"api.anthropic.com"}, "api.anthropic.com", 443));
  BOOST_TEST(!allows({"api.anthropic.com"}, "x.api.anthropic.com", 443));
  BOOST_TEST(!allows({"api.anthropic.com"}, "anthropic.com", 443));
}

BOOST_AUTO_TEST_CASE(case_and_trailing_dot_are_ignored) {
  BOOST_TEST(allows({"API.Anthropic.COM"}, "api.anthropic.com", 443));
  BOOST_TEST(allows({"api.anthropic.com"}, "API.ANTHROPIC.COM.", 443));
  BOOST_TEST(allows({"api.anthropic.com."}, "api.anthropic.com", 443));
  BOOST_TEST(allows({"*.Example.com"}, "A.B.EXAMPLE.COM.", 80));
  BOOST_TEST(allows({"bedrock.*.amazonaws.com"}, "BEDROCK.EU-WEST-1.AMAZONAWS.COM.", 443));
}

BOOST_AUTO_TEST_CASE(port_suffix_restricts_the_entry) {
  BOOST_TEST(allows({"example.com:8443"}, "example.com", 8443));
  BOOST_TEST(!allows({"example.com:8443"}, "example.com", 443));
  BOOST_TEST(allows({"example.com"}, "example.com", 22));
  BOOST_TEST(allows({"*.example.com:22"}, "git.example.com", 22));
  BOOST_TEST(!allows({"*.example.com:22"}, "git.example.com", 443));
}

BOOST_AUTO_TEST_CASE(ip_literals) {
  BOOST_TEST(allows({"127.0.0.1:8080"}, "127.0.0.1", 8080));
  BOOST_TEST(!allows({"127.0.0.1:8080"}, "127.0.0.1", 8081));
  BOOST_TEST(allows({"[::1]:8080"}, "::1", 8080));
  BOOST_TEST(allows({"[::1]:8080"}, "[::1]", 8080));
  BOOST_TEST(allows({"[fd00:0:0::1]"}, "fd00::1", 443));  // canonical forms compare
  BOOST_TEST(allows({"[fd00::1]"}, "FD00::0001", 443));
  // A name is not its address, and an address is not a name.
  BOOST_TEST(!allows({"localhost"}, "127.0.0.1", 80));
  BOOST_TEST(!allows({"127.0.0.1"}, "localhost", 80));
  BOOST_TEST(!allows({"*.0.0.1"}, "127.0.0.1", 80));
}

BOOST_AUTO_TEST_CASE(deny_list_wins_over_every_allow) {
  std::vector<std::string> deny{"169.254.169.254", "metadata.google.internal", "*.sentry.io",
                                "[fd00:ec2::254]"};
  BOOST_TEST(!allows({"169.254.169.254"}, "169.254.169.254", 80, deny));
  BOOST_TEST(!allows({"metadata.google.internal"}, "metadata.google.internal", 80, deny));
  BOOST_TEST(!allows({"*.google.internal"}, "METADATA.google.internal.", 80, deny));
  BOOST_TEST(!allows({"*.sentry.io"}, "o1.ingest.sentry.io", 443, deny));
  BOOST_TEST(!allows({"[fd00:ec2::254]"}, "fd00:ec2:0::254", 80, deny));
  DomainMatcher m({"metadata.google.internal"}, deny);
  auto d = m.decide(*DomainPattern::target("metadata.google.internal", 80));
  BOOST_TEST(d.reason.find("deny list") != std::string::npos);
  BOOST_TEST(d.reason.find("metadata.google.internal") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(empty_allowlist_refuses_everything) {
  DomainMatcher m({}, {});
  auto d = m.decide(*DomainPattern::target("api.anthropic.com", 443));
  BOOST_TEST(!d.allowed);
  BOOST_TEST(d.reason.find("network disabled") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(every_rejected_shape_names_the_entry) {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"*.*.example.com", "more than one"},
      {"a.*.*.example.com", "more than one"},
      {"foo*.example.com", "whole label"},
      {"*foo.example.com", "whole label"},
      {"f*o.example.com", "whole label"},
      {"example.*", "last label"},
      {"*", "lone"},
      {"*.", "lone"},
      {"", "empty host"},
      {".example.com", "empty label"},
      {"example..com", "empty label"},
      {"example.com..", "empty label"},
      {"example.com:", "without a port"},
      {"example.com:0", "port"},
      {"example.com:65536", "port"},
      {"example.com:http", "port"},
      {"fd00::1", "bracketed"},
      {"[fd00::1", "closing"},
      {"[example.com]", "IPv6"},
      {"[fd00::1]x", "after ']'"},
      {"exa mple.com", "not allowed"},
      {"exa/mple.com", "not allowed"},
      {std::string(64, 'a') + ".com", "63"},
  };
  for (const auto &[entry, why] : bad) {
    BOOST_TEST_CONTEXT("entry " << entry) {
      try {
        DomainPattern::parse(entry);
        BOOST_ERROR("accepted " + entry);
      } catch (const DomainPatternError &e) {
        std::string msg = e.what();
        BOOST_TEST(msg.find("\"" + entry + "\"") != std::string::npos, msg);
        BOOST_TEST(msg.find(why) != std::string::npos, msg);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(spec_decode_rejects_bad_entries_naming_them) {
  auto good = decodeSandboxSpec(boost::json::parse(
      R"({"sessionId":"s","workspaceId":"w","egressAllowlist":["*.example.com","bedrock.*.amazonaws.com:443","[::1]:80"]})"));
  BOOST_TEST(good.egressAllowlist.size() == 3u);
  try {
    decodeSandboxSpec(boost::json::parse(
        R"({"sessionId":"s","workspaceId":"w","egressAllowlist":["ok.example.com","*.*.evil.com"]})"));
    BOOST_ERROR("accepted two wildcards");
  } catch (const DecodeError &e) {
    std::string msg = e.what();
    BOOST_TEST(msg.find("egressAllowlist[1]") != std::string::npos, msg);
    BOOST_TEST(msg.find("*.*.evil.com") != std::string::npos, msg);
  }
}

BOOST_AUTO_TEST_CASE(shipped_lists_load_and_hold_the_required_entries) {
  const auto &lists = shippedEgressLists();
  auto has = [](const std::vector<std::string> &v, const std::string &e) {
    return std::find(v.begin(), v.end(), e) != v.end();
  };
  BOOST_TEST(has(lists.baseline, "api.anthropic.com"));
  BOOST_TEST(has(lists.baseline, "pypi.org"));
  BOOST_TEST(has(lists.github, "github.com"));
  for (const char *d :
       {"169.254.169.254", "metadata.google.internal", "100.100.100.200", "[fd00:ec2::254]"})
    BOOST_TEST(has(lists.denied, d), d);
  // Every entry parses, and a deny entry is never also allowed by the same lists.
  DomainMatcher all(
      [&] {
        auto v = lists.baseline;
        v.insert(v.end(), lists.github.begin(), lists.github.end());
        return v;
      }(),
      lists.denied);
  BOOST_TEST(all.decide(*DomainPattern::target("api.github.com", 443)).allowed);
  BOOST_TEST(
      all.decide(*DomainPattern::target("bedrock-runtime.us-west-2.amazonaws.com", 443)).allowed);
  BOOST_TEST(!all.decide(*DomainPattern::target("169.254.169.254", 80)).allowed);
  BOOST_TEST(!all.decide(*DomainPattern::target("evil.example", 443)).allowed);
}

BOOST_AUTO_TEST_CASE(a_bad_lists_file_is_refused_with_its_path) {
  test::TempTree tree;
  auto missing = tree.path() + "/nope.json";
  BOOST_CHECK_EXCEPTION(loadEgressLists(missing), std::runtime_error, [&](const auto &e) {
    return std::string(e.what()).find(missing) != std::string::npos;
  });
  auto bad = tree.file("bad.json", R"({"baseline":["*.*.x.com"],"github":[],"denied":[]})");
  BOOST_CHECK_EXCEPTION(loadEgressLists(bad), std::runtime_error, [&](const auto &e) {
    std::string m = e.what();
    return m.find(bad) != std::string::npos && m.find("*.*.x.com") != std::string::npos;
  });
  auto garbage = tree.file("garbage.json", "{not json");
  BOOST_CHECK_THROW(loadEgressLists(garbage), std::runtime_error);
  auto ok =
      tree.file("ok.json", R"({"baseline":["a.test"],"github":["b.test"],"denied":["c.test"]})");
  auto l = loadEgressLists(ok);
  BOOST_TEST(l.baseline == std::vector<std::string>{"a.test"});
  BOOST_TEST(l.denied == std::vector<std::string>{"c.test"});
}

BOOST_AUTO_TEST_CASE(resolved_address_check) {
  DomainMatcher rules({"allowed.test"}, {"203.0.113.66"});
  std::vector<ip::address> own{ip::make_address("192.0.2.10")};
  auto reason = [&](const char *a) {
    return forbiddenAddressReason(ip::make_address(a), 443, rules, own);
  };
  for (const char *bad :
       {"127.0.0.1", "127.1.2.3", "0.0.0.0", "169.254.169.254", "169.254.1.1", "224.0.0.1",
        "255.255.255.255", "100.100.100.200", "::1", "::", "fe80::1", "ff02::1", "fd00:ec2::254",
        "::ffff:127.0.0.1", "::ffff:169.254.169.254", "192.0.2.10", "203.0.113.66"})
    BOOST_TEST(reason(bad).has_value(), bad);
  for (const char *good : {"93.184.216.34", "2606:2800:220:1::1", "10.1.2.3"})
    BOOST_TEST(!reason(good).has_value(), good);
  BOOST_TEST(reason("127.0.0.1")->find("loopback") != std::string::npos);
  BOOST_TEST(reason("192.0.2.10")->find("this host") != std::string::npos);
  // The real interface list contains at least loopback.
  auto real = hostInterfaceAddresses();
  BOOST_TEST(std::count(real.begin(), real.end(), ip::make_address("127.0.0.1")) == 1);
}
