//! What an operation is for, from where its result goes: the algorithm's
//! work, finding the data (addresses) or choosing the path (control).

use serde::Serialize;
use std::fmt;

/// The role of an executed operation, decided once per SPIR-V function from
/// the uses of its result (the rules are in `clflow_interp::counts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Its result is stored, returned or feeds other work: the algorithm.
    Work,
    /// Its result only locates data: access chains' indexes, pointers.
    Address,
    /// Its result only decides branches, loop exits and switches.
    Control,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Work, Role::Address, Role::Control];

    pub fn name(self) -> &'static str {
        match self {
            Role::Work => "work",
            Role::Address => "address",
            Role::Control => "control",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A count split by role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ByRole {
    pub work: u64,
    pub address: u64,
    pub control: u64,
}

impl ByRole {
    pub fn get(&self, role: Role) -> u64 {
        match role {
            Role::Work => self.work,
            Role::Address => self.address,
            Role::Control => self.control,
        }
    }

    pub fn add(&mut self, role: Role, n: u64) {
        match role {
            Role::Work => self.work += n,
            Role::Address => self.address += n,
            Role::Control => self.control += n,
        }
    }

    pub fn total(&self) -> u64 {
        self.work + self.address + self.control
    }

    /// The one role all of it has, if it has one.
    pub fn only(&self) -> Option<Role> {
        let mut present = Role::ALL.into_iter().filter(|r| self.get(*r) > 0);
        match (present.next(), present.next()) {
            (Some(r), None) => Some(r),
            _ => None,
        }
    }
}
