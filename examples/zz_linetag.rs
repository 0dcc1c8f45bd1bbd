use memlat::kernels::line_tag::*;
fn med(mut v: Vec<f64>) -> f64 { v.sort_by(f64::total_cmp); v[v.len()/2] }
fn main() {
    for drop in [Drop::Flush, Drop::Evict] {
        let mut p = LineTagProbe::new(drop, memlat::platform::system::base_page_bytes(), 32<<10, 3).unwrap();
        let ds = [0u64, 8, 16, 32, 48, 56, 64, 128, 256];
        let mut res = vec![Vec::new(); ds.len()+1];
        for _ in 0..15 {
            for (i,&d) in ds.iter().enumerate() { res[i].push(p.time(d, 0).unwrap()); }
            res[ds.len()].push(p.time(0, KEPT_OFFSET).unwrap());
        }
        print!("{drop:?}: ");
        for (i,&d) in ds.iter().enumerate() { print!("d{d}={:.2} ", med(res[i].clone())); }
        println!("kept={:.2}", med(res[ds.len()].clone()));
    }
}
