//! `memlat doctor` end to end: it runs without root on any host and says
//! what it found, in text and in JSON.

use assert_cmd::Command;
use serde_json::Value;

#[test]
fn doctor_json_has_the_documented_fields_and_findings() {
    let out = Command::cargo_bin("memlat")
        .unwrap()
        .args(["doctor", "--format", "json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(v["pmu"].is_boolean());
    assert!(v["perf_event_paranoid"].is_null() || v["perf_event_paranoid"].is_i64());
    assert!(v["hypervisor"].is_null() || v["hypervisor"].is_string());
    assert!(v["thp"].is_string());
    assert!(v["msr_access"].is_boolean());
    assert!(v["numa_nodes"].as_u64().unwrap() >= 1);
    assert!(v["clock"]["estimate_ghz"].as_f64().unwrap() > 0.0);
    assert_eq!(v["clock"]["chains"].as_array().unwrap().len(), 2);
    assert!(v["clock"]["agree"].is_boolean());
    let findings = v["findings"].as_array().unwrap();
    assert!(findings.len() >= 10);
    for f in findings {
        for key in ["what", "value", "meaning"] {
            assert!(!f[key].as_str().unwrap().is_empty(), "{f}");
        }
    }
}

#[test]
fn doctor_text_names_the_clock_and_a_bad_cpu_is_a_usage_error() {
    let out = Command::cargo_bin("memlat")
        .unwrap()
        .arg("doctor")
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout);
    assert!(text.contains("core clock"), "{text}");
    Command::cargo_bin("memlat")
        .unwrap()
        .args(["doctor", "--cpu", "100000"])
        .assert()
        .code(2);
}
