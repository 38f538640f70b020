/* An empty ICU common-data package (ICU's own "stubdata"): libicuuc finds no data items, so
   ICU calls that need data (collation, legacy codecs) fail with an error code Qt handles. */
#include <stdint.h>

typedef struct {
    uint16_t size, reservedWord;
    uint8_t isBigEndian, charsetFamily, sizeofUChar, reservedByte;
    uint8_t dataFormat[4], formatVersion[4], dataVersion[4];
} DataInfo;

typedef struct {
    uint16_t headerSize;
    uint8_t magic1, magic2;
    DataInfo info;
    char padding[8];
    uint32_t count, reserved;
    int fakeNameAndData[4];
} DataHeader;

#ifndef ICU_ENTRY
#define ICU_ENTRY icudt73_dat
#endif

__attribute__((visibility("default"))) const DataHeader ICU_ENTRY = {
    32, 0xda, 0x27,
    {sizeof(DataInfo), 0, 0, 0, 2, 0, {0x54, 0x6f, 0x43, 0x50}, {1, 0, 0, 0}, {0, 0, 0, 0}},
    {0, 0, 0, 0, 0, 0, 0, 0}, 0, 0, {0, 0, 0, 0}
};
