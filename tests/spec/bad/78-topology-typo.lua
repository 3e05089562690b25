-- expect: 78-topology-typo.lua:3: topology 'v4-61': unknown TPU type 'v4-61' (did you mean 'v4-64'?)
-- A custom name this close to a catalogue type is most likely a typo.
topology "v4-61" { emulate = "pjrt" }
