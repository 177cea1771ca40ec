{
  "targets": [
    {
      "target_name": "akd_vrf",
      "sources": ["native/addon.c", "native/x8.c"],
      "defines": ["AKD_FIELD_LIMBS=5"],
      "cflags": ["-O3", "-Wall", "-Wextra"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O3"] }
    }
  ]
}
